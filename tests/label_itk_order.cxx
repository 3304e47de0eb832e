// `--order size-raster` against ITK, byte for byte: ConnectedComponentImageFilter (FullyConnected off =
// conn 6, on = conn 26; ITK has no 18-neighbourhood) then RelabelComponentImageFilter (descending size,
// ties by the connected-component label, which ITK numbers in raster order) on the volume V(x,y,z), x
// fastest, against vl_label_volume on the CPU in order size-raster. The same volumes also show that
// `size` (ties by the column-major MATLAB key) differs where equal sizes meet, so that the test would
// notice `size-raster` quietly becoming `size`.
//   label_itk_order [DICOM_SERIES_DIR...]   random volumes with many ties, then each readable series
//                                           thresholded at 150 HU and -500 HU (unreadable ones noted)
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "itkConnectedComponentImageFilter.h"
#include "itkImage.h"
#include "itkImportImageFilter.h"
#include "itkRelabelComponentImageFilter.h"

#include "test_check.h"
#include "voxlabel/dicom.h"
#include "voxlabel/label.h"
#include "voxlabel/threshold.h"

namespace {

using MaskImage = itk::Image<unsigned char, 3>;
using LabelImage = itk::Image<unsigned int, 3>;

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint64_t next_random()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

// ITK's labels of the nonzero voxels of `mask` (x fastest), and their count.
std::vector<uint32_t> itk_labels(const vl_volume *mask, int connectivity, uint32_t *count)
{
    auto import = itk::ImportImageFilter<unsigned char, 3>::New();
    MaskImage::SizeType size;
    size[0] = (itk::SizeValueType)mask->nx;
    size[1] = (itk::SizeValueType)mask->ny;
    size[2] = (itk::SizeValueType)mask->nz;
    MaskImage::IndexType start;
    start.Fill(0);
    import->SetRegion(MaskImage::RegionType(start, size));
    const size_t voxels = (size_t)vl_volume_voxels(mask);
    import->SetImportPointer(static_cast<unsigned char *>(mask->data), voxels, false);
    auto components = itk::ConnectedComponentImageFilter<MaskImage, LabelImage>::New();
    components->SetInput(import->GetOutput());
    components->SetFullyConnected(connectivity == 26);
    components->SetBackgroundValue(0);
    auto relabel = itk::RelabelComponentImageFilter<LabelImage, LabelImage>::New();
    relabel->SetInput(components->GetOutput());
    relabel->Update();
    *count = (uint32_t)relabel->GetNumberOfObjects();
    const unsigned int *data = relabel->GetOutput()->GetBufferPointer();
    return std::vector<uint32_t>(data, data + voxels);
}

struct ours {
    vl_volume labels{};
    vl_label_result result{};
    bool ok = false;
    ~ours()
    {
        vl_volume_free(&labels);
        vl_label_result_free(&result);
    }
};

void label(const vl_volume *mask, int connectivity, vl_label_order order, ours *out)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    options.connectivity = connectivity;
    options.order = order;
    out->ok = vl_label_volume(mask, &out->labels, &options, &out->result) == VL_OK;
}

int64_t differing(const std::vector<uint32_t> &a, const vl_volume *b)
{
    const uint32_t *l = static_cast<const uint32_t *>(b->data);
    int64_t d = 0;
    for (size_t i = 0; i < a.size(); i++)
        d += a[i] != l[i];
    return d;
}

// Compares size-raster with ITK; returns the voxels where `size` differs from ITK (0 when no ties bite).
// *ties gets the number of labels whose size equals the next label's.
int64_t compare(const vl_volume *mask, int connectivity, const char *what, uint32_t *ties)
{
    uint32_t itk_count = 0;
    const std::vector<uint32_t> expected = itk_labels(mask, connectivity, &itk_count);
    ours raster, by_size;
    label(mask, connectivity, VL_ORDER_SIZE_RASTER, &raster);
    label(mask, connectivity, VL_ORDER_SIZE, &by_size);
    CHECK(raster.ok && by_size.ok, "%s conn %d: labelling failed", what, connectivity);
    *ties = 0;
    if (!raster.ok || !by_size.ok)
        return 0;
    CHECK(raster.result.count == itk_count, "%s conn %d: N %u, ITK %u", what, connectivity, raster.result.count,
          itk_count);
    const int64_t d = differing(expected, &raster.labels);
    CHECK(d == 0, "%s conn %d: size-raster differs from ITK in %" PRId64 " voxels", what, connectivity, d);
    for (uint32_t k = 1; k < raster.result.count; k++)
        *ties += raster.result.sizes[k - 1] == raster.result.sizes[k];
    CHECK(by_size.result.count == itk_count, "%s conn %d: size N %u", what, connectivity, by_size.result.count);
    return differing(expected, &by_size.labels);
}

} // namespace

int main(int argc, char **argv)
{
    static const int64_t shapes[][3] = {{7, 5, 3}, {16, 16, 16}, {40, 23, 11}, {23, 40, 11}, {1, 60, 9},
                                        {60, 1, 9}, {64, 64, 8},  {5, 5, 100}, {33, 17, 29}, {100, 90, 4}};
    static const double densities[] = {0.03, 0.1, 0.2, 0.3};
    static const int conns[] = {6, 26};
    int volumes = 0, size_differs = 0, tie_cases = 0;
    for (const auto &shape : shapes)
        for (double density : densities) {
            vl_volume mask;
            if (vl_volume_create(&mask, shape[0], shape[1], shape[2], VL_U8) != VL_OK) {
                CHECK(false, "cannot allocate a mask");
                return test_finish("label_itk_order");
            }
            uint8_t *m = static_cast<uint8_t *>(mask.data);
            const uint64_t threshold = (uint64_t)(density * 18446744073709551615.0);
            for (int64_t i = 0; i < vl_volume_voxels(&mask); i++)
                m[i] = next_random() < threshold ? (uint8_t)(1 + next_random() % 255) : 0;
            char what[96];
            std::snprintf(what, sizeof what, "random %lldx%lldx%lld p=%.2f", (long long)shape[0], (long long)shape[1],
                          (long long)shape[2], density);
            for (int conn : conns) {
                uint32_t ties = 0;
                const int64_t d = compare(&mask, conn, what, &ties);
                volumes++;
                tie_cases += ties > 0;
                size_differs += d > 0;
            }
            vl_volume_free(&mask);
        }
    std::printf("random: %d (volume, connectivity) cases, %d with size ties, `size` differs from ITK in %d\n", volumes,
                tie_cases, size_differs);
    // Sparse noise has ties in nearly every case, and `size` must break some of them differently.
    CHECK(tie_cases > volumes / 2, "only %d of %d cases have size ties", tie_cases, volumes);
    CHECK(size_differs > 0, "`size` never differs from ITK: the test does not tell the two tie rules apart");

    static const double hu[] = {150, -500};
    int series = 0;
    for (int a = 1; a < argc; a++) {
        vl_dicom_read_options options;
        vl_dicom_read_options_default(&options);
        options.on_irregular = VL_IRREGULAR_WARN;
        vl_volume ct;
        if (vl_dicom_read_series(argv[a], &options, &ct, NULL) != VL_OK) {
            std::printf("note: %s: %s\n", argv[a], vl_last_error());
            continue;
        }
        series++;
        for (double t : hu) {
            vl_volume mask;
            const bool thresholded = vl_threshold(&ct, t, 1e9, &mask) == VL_OK;
            CHECK(thresholded, "%s: threshold %.0f", argv[a], t);
            if (!thresholded)
                continue;
            char what[600];
            std::snprintf(what, sizeof what, "%s (%lldx%lldx%lld) >= %.0f HU", argv[a], (long long)ct.nx,
                          (long long)ct.ny, (long long)ct.nz, t);
            for (int conn : conns) {
                uint32_t ties = 0;
                const int64_t d = compare(&mask, conn, what, &ties);
                std::printf("%s conn %d: size-raster == ITK; %u labels tie with the next, `size` differs from ITK "
                            "in %" PRId64 " voxels\n",
                            what, conn, ties, d);
            }
            vl_volume_free(&mask);
        }
        vl_volume_free(&ct);
    }
    if (argc > 1 && series == 0)
        std::printf("note: no readable DICOM series among the %d given (../shared absent?): random volumes only\n",
                    argc - 1);
    return test_finish("label_itk_order");
}
