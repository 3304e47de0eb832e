/* Geometry of a series (docs/design.md §3, docs/dicom.md §3): sort by IPP . normal, steps from the positions,
 * and every irregularity (duplicates, gaps, variable spacing, gantry tilt) spelled out. */
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "dicom_series.h"

namespace {

const double kDuplicateTolerance = 1e-3; /* mm along the normal */
const double kGapFactor = 1.5;           /* a step above 1.5 x the median is a gap */
const double kTiltTolerance = 0.01;      /* degrees */

double dot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

bool normalise(double *v)
{
    double length = std::sqrt(dot(v, v));
    if (!(length > 1e-6))
        return false;
    for (int i = 0; i < 3; i++)
        v[i] /= length;
    return true;
}

std::string format(const char *pattern, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char *pattern, ...)
{
    char text[512];
    va_list args;
    va_start(args, pattern);
    vsnprintf(text, sizeof text, pattern, args);
    va_end(args);
    return text;
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void set_axes(vl_dicom_stack &stack, const vl_dicom_frame &first)
{
    double row[3] = {1, 0, 0}, column[3] = {0, 1, 0};
    if (first.has_orientation) {
        std::copy(first.orientation, first.orientation + 3, row);
        std::copy(first.orientation + 3, first.orientation + 6, column);
    }
    if (!normalise(row) || !normalise(column)) {
        row[0] = 1, row[1] = row[2] = 0;
        column[1] = 1, column[0] = column[2] = 0;
    }
    double normal[3] = {row[1] * column[2] - row[2] * column[1], row[2] * column[0] - row[0] * column[2],
                        row[0] * column[1] - row[1] * column[0]};
    if (!normalise(normal)) {
        normal[0] = normal[1] = 0, normal[2] = 1;
    }
    std::copy(row, row + 3, stack.row);
    std::copy(column, column + 3, stack.column);
    std::copy(normal, normal + 3, stack.normal);
}

} // namespace

void vl_dicom_analyse_stack(const vl_dicom_files &files, const vl_dicom_group &group, vl_dicom_stack &stack)
{
    const std::vector<vl_dicom_frame> &frames = files.frames;
    const vl_dicom_frame &first = frames[group.frames[0]];
    set_axes(stack, first);
    stack.gantry_tilt_tag = first.gantry_tilt;
    stack.has_geometry = true;
    for (size_t index : group.frames)
        if (!frames[index].has_position || !frames[index].has_orientation)
            stack.has_geometry = false;

    std::vector<size_t> order = group.frames;
    std::vector<double> key(frames.size(), 0.0);
    for (size_t index : order)
        key[index] = stack.has_geometry ? dot(frames[index].position, stack.normal) : 0.0;
    /* Ties (and series without positions) fall back to InstanceNumber, then file and frame. */
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (stack.has_geometry && std::fabs(key[a] - key[b]) >= kDuplicateTolerance)
            return key[a] < key[b];
        const vl_dicom_frame &fa = frames[a], &fb = frames[b];
        if (fa.instance_number != fb.instance_number)
            return fa.instance_number < fb.instance_number;
        if (fa.path != fb.path)
            return fa.path < fb.path;
        return fa.frame < fb.frame;
    });
    if (!stack.has_geometry)
        stack.anomalies.push_back("ImagePositionPatient or ImageOrientationPatient missing: slices ordered by "
                                  "InstanceNumber, axes taken as the identity (or the orientation given), z spacing "
                                  "from SliceThickness");

    /* Duplicate positions: identical copies (same SOP instance and frame) are dropped silently; different
     * images at one position are counted (multiple phases, or a repeated slice). */
    stack.order.clear();
    for (size_t index : order) {
        if (stack.has_geometry && !stack.order.empty() &&
            std::fabs(key[index] - key[stack.order.back()]) < kDuplicateTolerance) {
            const vl_dicom_frame &kept = frames[stack.order.back()], &frame = frames[index];
            if (kept.sop_instance_uid == frame.sop_instance_uid && kept.frame == frame.frame &&
                !frame.sop_instance_uid.empty())
                stack.copies_dropped++;
            else
                stack.duplicate_count++;
            continue;
        }
        stack.order.push_back(index);
        stack.positions.push_back(key[index]);
    }
    if (stack.copies_dropped)
        stack.anomalies.push_back(format("%lld identical copies of images (same SOPInstanceUID) ignored",
                                         (long long)stack.copies_dropped));
    if (stack.duplicate_count)
        stack.anomalies.push_back(format("%lld image(s) share a slice position with another image (multiple phases "
                                         "or repeated slices?); only the lowest InstanceNumber at each position is kept",
                                         (long long)stack.duplicate_count));
    size_t n = stack.order.size();
    /* One position is an anomaly only when different images share it; identical copies are one image. */
    if (stack.has_geometry && n == 1 && group.frames.size() - static_cast<size_t>(stack.copies_dropped) > 1)
        stack.single_position = true;

    vl_geometry &g = stack.geometry;
    vl_geometry_identity(&g);
    const vl_dicom_frame &front = frames[stack.order[0]];
    g.spacing[0] = front.pixel_spacing[1];
    g.spacing[1] = front.pixel_spacing[0];
    double z_spacing = front.slice_thickness > 0 ? front.slice_thickness : 1.0;
    double step_direction[3] = {stack.normal[0], stack.normal[1], stack.normal[2]};
    if (front.has_position)
        std::copy(front.position, front.position + 3, g.origin);
    if (!front.has_pixel_spacing)
        stack.anomalies.push_back("PixelSpacing missing: 1 mm assumed");

    if (stack.has_geometry && n >= 2) {
        const vl_dicom_frame &back = frames[stack.order[n - 1]];
        double step[3];
        for (int r = 0; r < 3; r++)
            step[r] = (back.position[r] - front.position[r]) / (double)(n - 1);
        double length = std::sqrt(dot(step, step));
        z_spacing = length;
        for (int r = 0; r < 3; r++)
            step_direction[r] = step[r] / length;
        double cosine = std::min(1.0, std::fabs(dot(step, stack.normal)) / length);
        stack.tilt_degrees = std::acos(cosine) * 180.0 / M_PI;

        std::vector<double> steps;
        for (size_t k = 1; k < n; k++)
            steps.push_back(stack.positions[k] - stack.positions[k - 1]);
        stack.step_min = *std::min_element(steps.begin(), steps.end());
        stack.step_max = *std::max_element(steps.begin(), steps.end());
        stack.step_median = median(steps);
        std::string gap_list;
        for (size_t k = 0; k < steps.size(); k++)
            if (steps[k] > kGapFactor * stack.step_median) {
                if (stack.gap_count < 5)
                    gap_list += format("%s%.3f mm after slice %zu", stack.gap_count ? ", " : "", steps[k], k);
                stack.gap_count++;
            }
        stack.variable_spacing = stack.step_max - stack.step_min > std::max(0.01, 1e-3 * stack.step_median);
        if (stack.gap_count)
            stack.anomalies.push_back(format("%lld gap(s) (missing slices?), steps over %.1f x the median %.4f mm: %s%s",
                                             (long long)stack.gap_count, kGapFactor, stack.step_median,
                                             gap_list.c_str(), stack.gap_count > 5 ? ", ..." : ""));
        if (stack.variable_spacing)
            stack.anomalies.push_back(format("variable slice spacing: steps %.4f..%.4f mm (median %.4f); the volume's "
                                             "z spacing %.4f mm is the mean step",
                                             stack.step_min, stack.step_max, stack.step_median, z_spacing));
        if (stack.tilt_degrees > kTiltTolerance) {
            std::string tag = std::isnan(stack.gantry_tilt_tag)
                                  ? std::string("no GantryDetectorTilt tag")
                                  : format("GantryDetectorTilt tag says %g", stack.gantry_tilt_tag);
            stack.anomalies.push_back(format("gantry tilt: the slice stack is sheared by %.3f degrees (measured from "
                                             "the positions; %s); the shear is kept in the direction matrix (NIfTI outputs are deskewed, "
                                             "as ITK reads no sheared NIfTI)",
                                             stack.tilt_degrees, tag.c_str()));
        }
    } else if (n == 1 && !stack.single_position) {
        stack.anomalies.push_back(format("single slice: z spacing %.4g mm from %s", z_spacing,
                                         front.slice_thickness > 0 ? "SliceThickness" : "a default of 1 mm"));
    }
    if (stack.single_position)
        stack.anomalies.push_back(format("all %zu images are at one position: not a volume",
                                         group.frames.size() - static_cast<size_t>(stack.copies_dropped)));
    g.spacing[2] = z_spacing;
    for (int r = 0; r < 3; r++) {
        g.direction[3 * r + 0] = stack.row[r];
        g.direction[3 * r + 1] = stack.column[r];
        g.direction[3 * r + 2] = step_direction[r];
    }
    if (!stack.has_geometry) {
        stack.positions.clear();
        for (size_t k = 0; k < n; k++)
            stack.positions.push_back((double)k * z_spacing);
    }
}
