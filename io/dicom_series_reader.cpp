/* vl_dicom_read_series: discover, choose a series, check its geometry against the irregularity policy,
 * decode its files in parallel threads, optionally resample, and report everything noticed. */
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcuid.h>

#include "dicom_codecs.h"
#include "dicom_pixels.h"
#include "dicom_resample.h"
#include "dicom_series.h"
#include "dicom_workers.h"
#include "core/memory.h"
#include "voxlabel/error.h"
#include "voxlabel/dicom.h"

namespace {

char *copy_string(const std::string &text)
{
    char *copy = (char *)malloc(text.size() + 1);
    if (copy)
        memcpy(copy, text.c_str(), text.size() + 1);
    return copy;
}

void append(char ***list, size_t *count, const std::string &text)
{
    char **grown = (char **)realloc(*list, (*count + 1) * sizeof **list);
    if (!grown)
        return;
    *list = grown;
    if ((grown[*count] = copy_string(text)))
        (*count)++;
}

void free_list(char **list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(list[i]);
    free(list);
}

template <size_t N> void set_text(char (&field)[N], const std::string &text)
{
    snprintf(field, N, "%s", text.c_str());
}

std::string transfer_syntaxes(const vl_dicom_files &files, const std::vector<size_t> &frames)
{
    std::vector<std::string> names;
    for (size_t index : frames) {
        std::string name = vl_dicom_transfer_syntax_name(files.frames[index].transfer_syntax_uid);
        if (std::find(names.begin(), names.end(), name) == names.end())
            names.push_back(name);
    }
    std::string joined;
    for (const std::string &name : names)
        joined += (joined.empty() ? "" : ", ") + name;
    return joined;
}

struct file_job {
    std::string path;
    std::vector<vl_dicom_slice_target> targets;
};

vl_status decode_all(const std::vector<file_job> &jobs, const vl_dicom_pixel_rules &rules, int threads,
                     vl_shared_progress &progress)
{
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex error_lock;
    vl_status first_status = VL_OK;
    std::string first_error;
    auto worker = [&] {
        for (size_t job; !failed.load() && !rules.int16_overflow->load() && (job = next.fetch_add(1)) < jobs.size();) {
            vl_status status = vl_dicom_decode_file(jobs[job].path, jobs[job].targets, rules);
            if (status != VL_OK) {
                std::lock_guard<std::mutex> guard(error_lock);
                if (!failed.exchange(true)) {
                    first_status = status;
                    first_error = vl_last_error(); /* the detail lives in this worker's thread-local slot */
                }
                return;
            }
            progress.advance((int64_t)jobs[job].targets.size());
        }
    };
    vl_run_workers((size_t)threads, worker);
    if (failed)
        return vl_fail(first_status, "%s", first_error.c_str());
    return VL_OK;
}

/* Applies the irregularity policy: which anomalies stop the load. */
vl_status check_policy(const vl_dicom_stack &stack, vl_dicom_irregular policy, const std::string &what)
{
    /* One image left once identical copies (same SOPInstanceUID and frame, e.g. a compressed and an uncompressed
     * copy of one file) are dropped is one image, read as a one-slice volume like a single DICOM file. */
    char dropped[96] = "";
    if (stack.copies_dropped)
        snprintf(dropped, sizeof dropped, " after %lld identical copies were dropped", (long long)stack.copies_dropped);
    if (stack.single_position && !(stack.order.size() == 1 && stack.duplicate_count == 0 && stack.copies_dropped > 0))
        return vl_fail(VL_ERR_INPUT, "%s: all %zu distinct images are at the same position (%g mm)%s: not a volume, "
                                     "which needs at least 2 positions (check the series, or choose one with --series)",
                       what.c_str(), stack.order.size() + (size_t)stack.duplicate_count, stack.positions[0], dropped);
    if (policy == VL_IRREGULAR_WARN || policy == VL_IRREGULAR_RESAMPLE)
        return VL_OK;
    bool strict = policy == VL_IRREGULAR_ERROR;
    const char *hint = "use --on-irregular warn to load the native grid or --on-irregular resample for a uniform grid";
    if (stack.duplicate_count)
        return vl_fail(VL_ERR_INPUT, "%s: %lld image(s) share a slice position with another image (multiple phases or "
                                     "repeated slices?); %s",
                       what.c_str(), (long long)stack.duplicate_count, hint);
    if (stack.gap_count)
        return vl_fail(VL_ERR_INPUT, "%s: %lld gap(s) between slices (steps above 1.5 x the median %.4f mm, up to "
                                     "%.4f mm: missing slices?); %s",
                       what.c_str(), (long long)stack.gap_count, stack.step_median, stack.step_max, hint);
    if (strict && stack.variable_spacing)
        return vl_fail(VL_ERR_INPUT, "%s: variable slice spacing %.4f..%.4f mm; %s", what.c_str(), stack.step_min,
                       stack.step_max, hint);
    if (strict && stack.tilt_degrees > 0.01)
        return vl_fail(VL_ERR_INPUT, "%s: gantry tilt, the stack is sheared by %.3f degrees; %s", what.c_str(),
                       stack.tilt_degrees, hint);
    return VL_OK;
}

void fill_report_header(vl_dicom_report *report, const vl_dicom_files &files, const vl_dicom_group &group,
                        const vl_dicom_stack &stack)
{
    const vl_dicom_frame &first = files.frames[group.frames[0]];
    set_text(report->series_uid, first.series_uid);
    set_text(report->series_description, first.description);
    set_text(report->modality, first.modality);
    report->series_number = first.series_number;
    set_text(report->transfer_syntax, transfer_syntaxes(files, group.frames));
    report->tilt_degrees = stack.tilt_degrees;
    report->gantry_tilt_tag = stack.gantry_tilt_tag;
    report->window_center = first.window_center;
    report->window_width = first.window_width;
    report->step_min_mm = stack.step_min;
    report->step_median_mm = stack.step_median;
    report->step_max_mm = stack.step_max;
    report->gap_count = stack.gap_count;
    report->duplicate_count = stack.duplicate_count;
    report->slice_count = (int64_t)stack.order.size();
    free(report->slice_positions);
    report->slice_positions = (double *)malloc(stack.positions.size() * sizeof(double));
    if (report->slice_positions) {
        std::copy(stack.positions.begin(), stack.positions.end(), report->slice_positions);
        report->slice_position_count = (int64_t)stack.positions.size();
    }
}

/* Output type: I16 when every slice maps stored values to HU by an integer offset and the fill fits. */
bool choose_int16(const vl_dicom_files &files, const vl_dicom_stack &stack, const vl_dicom_read_options &options)
{
    if (!options.keep_padding && (options.padding_fill_hu != std::floor(options.padding_fill_hu) ||
                                  std::fabs(options.padding_fill_hu) > 32767))
        return false;
    for (size_t index : stack.order) {
        const vl_dicom_frame &f = files.frames[index];
        if (f.slope != 1.0 || f.intercept != std::floor(f.intercept) || std::fabs(f.intercept) > 65536)
            return false;
    }
    return true;
}

bool rescale_varies(const vl_dicom_files &files, const vl_dicom_stack &stack)
{
    const vl_dicom_frame &first = files.frames[stack.order[0]];
    for (size_t index : stack.order)
        if (files.frames[index].slope != first.slope || files.frames[index].intercept != first.intercept)
            return true;
    return false;
}

/* Frees a volume of vl_volume_create_in, except the caller's block, which stays the caller's. */
void release_native(vl_volume *native, const vl_dicom_read_options &options)
{
    if (native->data == options.reuse)
        memset(native, 0, sizeof *native);
    else
        vl_volume_free(native);
}

/* `listed`: read exactly these files (and `path` only names them), else everything under `path`. */
vl_status read_series(const char *path, const std::vector<std::string> *listed, const vl_dicom_read_options &options,
                      vl_volume *hu, vl_dicom_report *report)
{
    vl_dicom_files files;
    vl_status status = listed ? vl_dicom_discover_list(*listed, path, &options.progress, files)
                              : vl_dicom_discover(path, &options.progress, files);
    if (status != VL_OK)
        return status;
    std::vector<std::string> notes;
    size_t chosen = 0;
    status = vl_dicom_choose_group(files, options.series, chosen, notes);
    for (const std::string &note : notes)
        append(&report->notes, &report->note_count, note);
    if (files.files_not_dicom || files.files_directory || files.files_non_image)
        append(&report->notes, &report->note_count,
               "skipped " + std::to_string(files.files_not_dicom) + " non-DICOM file(s), " +
                   std::to_string(files.files_directory) + " DICOMDIR/DIRFILE record(s), " +
                   std::to_string(files.files_non_image) + " DICOM file(s) without an image");
    if (status != VL_OK)
        return status;
    const vl_dicom_group &group = files.groups[chosen];
    const vl_dicom_frame &first = files.frames[group.frames[0]];
    std::string what = std::string(path) + ": series " + std::to_string(first.series_number) + " \"" +
                       first.description + "\"";
    if (group.is_colour)
        return vl_fail(VL_ERR_INPUT, "%s: is a colour image series (%s), which cannot be labelled as CT (use the 2D "
                                     "colour stage)",
                       what.c_str(), first.photometric.c_str());
    if (group.is_localizer)
        append(&report->warnings, &report->warning_count, "the chosen series is a localizer");

    vl_dicom_stack stack;
    vl_dicom_analyse_stack(files, group, stack);
    fill_report_header(report, files, group, stack);
    for (const std::string &anomaly : stack.anomalies)
        append(&report->warnings, &report->warning_count, anomaly);
    status = check_policy(stack, options.on_irregular, what);
    if (status != VL_OK)
        return status;
    for (size_t index : stack.order)
        if (!files.frames[index].broken.empty())
            return vl_fail(VL_ERR_INPUT, "%s: %s", files.frames[index].path.c_str(),
                           files.frames[index].broken.c_str());
    if (rescale_varies(files, stack))
        append(&report->warnings, &report->warning_count,
               "RescaleSlope/RescaleIntercept vary between slices: each slice is rescaled with its own values");
    if (first.modality != "CT")
        append(&report->warnings, &report->warning_count,
               "modality is " + (first.modality.empty() ? std::string("missing") : first.modality) +
                   ", not CT: values are rescaled stored values, not Hounsfield units");

    /* One job per file, so multi-frame objects are decoded once. */
    std::vector<file_job> jobs;
    std::map<std::string, size_t> job_of_file;
    for (size_t k = 0; k < stack.order.size(); k++) {
        const vl_dicom_frame &frame = files.frames[stack.order[k]];
        auto found = job_of_file.find(frame.path);
        if (found == job_of_file.end()) {
            found = job_of_file.emplace(frame.path, jobs.size()).first;
            jobs.push_back(file_job{frame.path, {}});
        }
        jobs[found->second].targets.push_back(vl_dicom_slice_target{&frame, (void *)(uintptr_t)k});
    }
    int threads = options.threads > 0 ? options.threads : (int)std::max(1u, std::thread::hardware_concurrency());
    threads = (int)std::min<size_t>((size_t)threads, jobs.size());

    const int64_t nx = first.columns, ny = first.rows, nz = (int64_t)stack.order.size();
    vl_volume native;
    std::atomic<int64_t> padded{0};
    std::atomic<bool> overflow{false};
    for (bool to_int16 = choose_int16(files, stack, options);; to_int16 = false) {
        status = vl_volume_create_in(&native, nx, ny, nz, to_int16 ? VL_I16 : VL_F32, options.reuse,
                                     options.reuse_bytes);
        if (status != VL_OK)
            return status;
        native.geometry = stack.geometry;
        size_t slice_bytes = (size_t)(nx * ny) * vl_dtype_size(native.dtype);
        std::vector<file_job> bound = jobs;
        for (file_job &job : bound)
            for (vl_dicom_slice_target &target : job.targets)
                target.destination = (char *)native.data + (uintptr_t)target.destination * slice_bytes;
        vl_dicom_pixel_rules rules{to_int16, options.keep_padding != 0, options.padding_fill_hu, &padded, &overflow};
        vl_shared_progress progress;
        progress.progress = &options.progress;
        progress.stage = "decoding";
        progress.total = nz;
        padded = 0;
        overflow = false;
        status = decode_all(bound, rules, threads, progress);
        if (status != VL_OK) {
            release_native(&native, options);
            return status;
        }
        if (!overflow)
            break;
        release_native(&native, options);
    }
    report->padded_voxels = padded;
    if (padded) {
        char text[200];
        if (options.keep_padding)
            snprintf(text, sizeof text, "%lld voxels equal PixelPaddingValue (outside the field of view), kept at "
                     "their rescaled value", (long long)padded.load());
        else
            snprintf(text, sizeof text, "%lld voxels equal PixelPaddingValue (outside the field of view), set to %g HU",
                     (long long)padded.load(), options.padding_fill_hu);
        append(&report->notes, &report->note_count, text);
    }

    bool resample = options.on_irregular == VL_IRREGULAR_RESAMPLE && stack.has_geometry && nz > 1 &&
                    (stack.gap_count || stack.variable_spacing || stack.tilt_degrees > 0.01);
    if (!resample) {
        *hu = native;
        return VL_OK;
    }
    std::vector<std::array<double, 3>> origins;
    for (size_t index : stack.order) {
        const vl_dicom_frame &frame = files.frames[index];
        origins.push_back({frame.position[0], frame.position[1], frame.position[2]});
    }
    double step = stack.step_median;
    status = vl_dicom_resample(&native, stack, origins, step, options.padding_fill_hu, hu);
    release_native(&native, options);
    if (status != VL_OK)
        return status;
    report->resampled = 1;
    report->slice_count = hu->nz;
    char text[256];
    snprintf(text, sizeof text,
             "resampled (trilinear) to a uniform, un-sheared grid: %lld slices at %.4f mm (the median step), "
             "outside the native slices %g HU",
             (long long)hu->nz, step, options.padding_fill_hu);
    append(&report->notes, &report->note_count, text);
    return VL_OK;
}

} // namespace

extern "C" void vl_dicom_read_options_default(vl_dicom_read_options *options)
{
    memset(options, 0, sizeof *options);
    options->on_irregular = VL_IRREGULAR_DEFAULT;
    options->padding_fill_hu = -1024.0;
}

extern "C" vl_status vl_dicom_irregular_parse(const char *text, vl_dicom_irregular *policy)
{
    static const struct {
        const char *name;
        vl_dicom_irregular value;
    } names[] = {{"default", VL_IRREGULAR_DEFAULT},
                 {"error", VL_IRREGULAR_ERROR},
                 {"warn", VL_IRREGULAR_WARN},
                 {"resample", VL_IRREGULAR_RESAMPLE}};
    for (const auto &entry : names)
        if (text && strcmp(text, entry.name) == 0) {
            *policy = entry.value;
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT, "--on-irregular: '%s' is not one of error, warn, resample", text ? text : "");
}

extern "C" const char *vl_dicom_irregular_name(vl_dicom_irregular policy)
{
    switch (policy) {
    case VL_IRREGULAR_DEFAULT: return "default";
    case VL_IRREGULAR_ERROR: return "error";
    case VL_IRREGULAR_WARN: return "warn";
    case VL_IRREGULAR_RESAMPLE: return "resample";
    }
    return "unknown";
}

static vl_status read_series_guarded(const char *path, const std::vector<std::string> *listed,
                                     const vl_dicom_read_options *options, vl_volume *hu, vl_dicom_report *report)
{
    vl_dicom_read_options defaults;
    if (!options) {
        vl_dicom_read_options_default(&defaults);
        options = &defaults;
    }
    vl_dicom_report scratch;
    if (!report)
        report = &scratch;
    memset(report, 0, sizeof *report);
    report->series_number = -1;
    report->gantry_tilt_tag = NAN;
    report->window_center = report->window_width = NAN;
    memset(hu, 0, sizeof *hu);
    vl_status status;
    if (!path || !*path) {
        status = vl_fail(VL_ERR_ARGUMENT, "DICOM input: no path given");
    } else {
        try {
            status = read_series(path, listed, *options, hu, report);
        } catch (const std::bad_alloc &) {
            status = vl_fail(VL_ERR_MEMORY, "%s: out of memory while reading the series", path);
        } catch (const std::exception &error) {
            status = vl_fail(VL_ERR_INPUT, "%s: %s", path, error.what());
        }
    }
    if (report == &scratch)
        vl_dicom_report_free(&scratch);
    return status;
}

extern "C" vl_status vl_dicom_read_series(const char *path, const vl_dicom_read_options *options, vl_volume *hu,
                                          vl_dicom_report *report)
{
    return read_series_guarded(path, nullptr, options, hu, report);
}

extern "C" vl_status vl_dicom_read_series_files(const char *const *paths, size_t count, const char *what,
                                                const vl_dicom_read_options *options, vl_volume *hu,
                                                vl_dicom_report *report)
{
    try {
        std::vector<std::string> listed(paths, paths + count);
        return read_series_guarded(what ? what : "DICOM series", &listed, options, hu, report);
    } catch (const std::bad_alloc &) {
        memset(hu, 0, sizeof *hu);
        if (report)
            memset(report, 0, sizeof *report);
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory while listing the series", what ? what : "DICOM series");
    }
}

extern "C" void vl_dicom_report_free(vl_dicom_report *report)
{
    if (!report)
        return;
    free_list(report->warnings, report->warning_count);
    free_list(report->notes, report->note_count);
    free(report->slice_positions);
    report->warnings = report->notes = nullptr;
    report->warning_count = report->note_count = 0;
    report->slice_positions = nullptr;
    report->slice_position_count = 0;
}

extern "C" vl_status vl_dicom_scan_path(const char *path, const vl_dicom_read_options *options, vl_dicom_scan *scan)
{
    memset(scan, 0, sizeof *scan);
    if (!path || !*path)
        return vl_fail(VL_ERR_ARGUMENT, "DICOM input: no path given");
    try {
        vl_dicom_files files;
        vl_status status = vl_dicom_discover(path, options ? &options->progress : nullptr, files);
        scan->files_seen = files.files_seen;
        scan->files_not_dicom = files.files_not_dicom;
        scan->files_directory = files.files_directory;
        scan->files_non_image = files.files_non_image;
        for (const std::string &note : files.notes)
            append(&scan->notes, &scan->note_count, note);
        if (status != VL_OK)
            return status;
        std::vector<std::string> notes;
        size_t chosen = (size_t)-1;
        if (vl_dicom_choose_group(files, options ? options->series : nullptr, chosen, notes) != VL_OK) {
            append(&scan->notes, &scan->note_count, std::string("no default series: ") + vl_last_error());
            chosen = (size_t)-1;
        }
        scan->series = (vl_dicom_series_info *)calloc(files.groups.size(), sizeof *scan->series);
        if (!scan->series)
            return vl_fail(VL_ERR_MEMORY, "%s: out of memory", path);
        scan->series_count = files.groups.size();
        for (size_t g = 0; g < files.groups.size(); g++) {
            const vl_dicom_group &group = files.groups[g];
            const vl_dicom_frame &first = files.frames[group.frames[0]];
            vl_dicom_series_info &info = scan->series[g];
            vl_dicom_stack stack;
            vl_dicom_analyse_stack(files, group, stack);
            set_text(info.patient_id, first.patient_id);
            set_text(info.study_uid, first.study_uid);
            set_text(info.series_uid, first.series_uid);
            std::vector<std::string> paths;
            for (size_t index : group.frames)
                paths.push_back(files.frames[index].path);
            std::sort(paths.begin(), paths.end());
            paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
            for (const std::string &file : paths)
                append(&info.paths, &info.path_count, file);
            set_text(info.description, first.description);
            set_text(info.modality, first.modality);
            const char *class_name = dcmFindNameOfUID(first.sop_class_uid.c_str(), nullptr);
            set_text(info.sop_class, class_name ? class_name : first.sop_class_uid);
            set_text(info.image_type, first.image_type);
            set_text(info.photometric, first.photometric);
            set_text(info.transfer_syntax, transfer_syntaxes(files, group.frames));
            info.series_number = first.series_number;
            info.rows = (int)first.rows;
            info.columns = (int)first.columns;
            info.samples_per_pixel = (int)first.samples_per_pixel;
            info.file_count = (int64_t)group.file_count;
            info.slice_count = (int64_t)group.frames.size();
            std::copy(first.orientation, first.orientation + 6, info.orientation);
            info.spacing[0] = first.pixel_spacing[1];
            info.spacing[1] = first.pixel_spacing[0];
            info.spacing[2] = stack.geometry.spacing[2];
            if (stack.order.size() > 1 && stack.has_geometry) {
                info.normal_step[0] = stack.step_min;
                info.normal_step[1] = stack.step_median;
                info.normal_step[2] = stack.step_max;
            }
            info.variable_spacing = stack.variable_spacing;
            info.tilt_degrees = stack.tilt_degrees;
            info.is_ct_like = group.is_ct_like;
            info.is_localizer = group.is_localizer;
            info.is_derived = group.is_derived;
            info.is_colour = group.is_colour;
            info.is_default_choice = g == chosen;
            for (const std::string &anomaly : stack.anomalies)
                append(&info.anomalies, &info.anomaly_count, anomaly);
            for (size_t index : group.frames)
                if (!files.frames[index].broken.empty()) {
                    append(&info.anomalies, &info.anomaly_count,
                           "cannot be decoded: " + files.frames[index].path + ": " + files.frames[index].broken);
                    break;
                }
        }
        return VL_OK;
    } catch (const std::bad_alloc &) {
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory while scanning", path);
    } catch (const std::exception &error) {
        return vl_fail(VL_ERR_INPUT, "%s: %s", path, error.what());
    }
}

extern "C" void vl_dicom_scan_free(vl_dicom_scan *scan)
{
    if (!scan)
        return;
    for (size_t g = 0; g < scan->series_count; g++)
    {
        free_list(scan->series[g].anomalies, scan->series[g].anomaly_count);
        free_list(scan->series[g].paths, scan->series[g].path_count);
    }
    free(scan->series);
    free_list(scan->notes, scan->note_count);
    memset(scan, 0, sizeof *scan);
}
