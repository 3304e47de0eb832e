// ITK oracle for the component statistics (test and bench helper, not part of voxlabel): reads a label
// NIfTI and an intensity NIfTI with ITK's own reader (which maps NIfTI's RAS to LPS, as voxlabel does),
// runs LabelImageToStatisticsLabelMapFilter (shape + intensity attributes, perimeter and histogram on)
// and prints one CSV row per label. With --time R it prints the median seconds of R runs instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkLabelImageToShapeLabelMapFilter.h"
#include "itkLabelImageToStatisticsLabelMapFilter.h"
#include "itkNiftiImageIOFactory.h"

using LabelImage = itk::Image<unsigned int, 3>;
using IntensityImage = itk::Image<float, 3>;
using StatisticsFilter = itk::LabelImageToStatisticsLabelMapFilter<LabelImage, IntensityImage>;
using ShapeFilter = itk::LabelImageToShapeLabelMapFilter<LabelImage>;

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: stats_itk_oracle LABELS.nii.gz INTENSITY.nii.gz [--time REPEATS]\n");
        return 2;
    }
    // Registered by hand: the test links ITK's libraries without UseITK.cmake's generated factory list.
    itk::NiftiImageIOFactory::RegisterOneFactory();
    auto labels = itk::ImageFileReader<LabelImage>::New();
    labels->SetFileName(argv[1]);
    auto intensity = itk::ImageFileReader<IntensityImage>::New();
    intensity->SetFileName(argv[2]);
    try {
        labels->Update();
        intensity->Update();
    } catch (const itk::ExceptionObject &error) {
        std::fprintf(stderr, "stats_itk_oracle: %s\n", error.GetDescription());
        return 3;
    }
    if (argc >= 5 && std::strcmp(argv[3], "--time") == 0) {
        const int repeats = std::atoi(argv[4]);
        for (int variant = 0; variant < 3; variant++) {
            std::vector<double> times;
            for (int r = 0; r < repeats; r++) {
                const auto start = std::chrono::steady_clock::now();
                if (variant == 2) {
                    auto filter = StatisticsFilter::New();
                    filter->SetInput(labels->GetOutput());
                    filter->SetFeatureImage(intensity->GetOutput());
                    filter->Update();
                } else {
                    auto filter = ShapeFilter::New();
                    filter->SetInput(labels->GetOutput());
                    filter->SetComputePerimeter(variant == 1);
                    filter->Update();
                }
                times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            }
            std::sort(times.begin(), times.end());
            static const char *names[] = {"itk_shape_no_perimeter", "itk_shape_perimeter", "itk_shape_statistics"};
            std::printf("%s %.4f\n", names[variant], times[times.size() / 2]);
        }
        return 0;
    }
    auto filter = StatisticsFilter::New();
    filter->SetInput(labels->GetOutput());
    filter->SetFeatureImage(intensity->GetOutput());
    filter->SetComputePerimeter(true);
    filter->Update();
    auto *map = filter->GetOutput();
    std::printf("label,voxels,physical_size,centroid_0,centroid_1,centroid_2,bbox_min_0,bbox_min_1,bbox_min_2,"
                "bbox_max_0,bbox_max_1,bbox_max_2,border_voxels,moment_0,moment_1,moment_2,elongation,flatness,"
                "perimeter,minimum,maximum,mean,sum,variance,median,gravity_0,gravity_1,gravity_2\n");
    for (unsigned i = 0; i < map->GetNumberOfLabelObjects(); i++) {
        auto *object = map->GetNthLabelObject(i);
        const auto centroid = object->GetCentroid();
        const auto box = object->GetBoundingBox();
        const auto moments = object->GetPrincipalMoments();
        const auto gravity = object->GetCenterOfGravity();
        std::printf("%u,%llu,%.17g,%.17g,%.17g,%.17g,%ld,%ld,%ld,%ld,%ld,%ld,%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,"
                    "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                    object->GetLabel(), (unsigned long long)object->GetNumberOfPixels(), object->GetPhysicalSize(),
                    centroid[0], centroid[1], centroid[2], (long)box.GetIndex()[0], (long)box.GetIndex()[1],
                    (long)box.GetIndex()[2], (long)(box.GetIndex()[0] + box.GetSize()[0] - 1),
                    (long)(box.GetIndex()[1] + box.GetSize()[1] - 1), (long)(box.GetIndex()[2] + box.GetSize()[2] - 1),
                    (unsigned long long)object->GetNumberOfPixelsOnBorder(), moments[0], moments[1], moments[2],
                    object->GetElongation(), object->GetFlatness(), object->GetPerimeter(), object->GetMinimum(),
                    object->GetMaximum(), object->GetMean(), object->GetSum(), object->GetVariance(),
                    object->GetMedian(), gravity[0], gravity[1], gravity[2]);
    }
    return 0;
}
