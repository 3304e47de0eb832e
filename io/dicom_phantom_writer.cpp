/* Writes an I16 HU volume as a CT Image Storage series, one file per slice, into a directory that
 * appears atomically (a temporary sibling renamed into place). */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmdata/dcuid.h>

#include "dicom_codecs.h"
#include "voxlabel/error.h"
#include "voxlabel/dicom.h"

namespace {

/* A decimal string (DS) of at most 16 characters with as many digits as fit. */
std::string decimal_string(double value)
{
    char text[64];
    for (int digits = 15; digits > 0; digits--) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (strlen(text) <= 16)
            break;
    }
    return text;
}

std::string new_uid(const char *root)
{
    char uid[100];
    dcmGenerateUniqueIdentifier(uid, root);
    return uid;
}

/* What the writer itself puts in a series directory: slice_<digits>.dcm. --force replaces only those. */
bool is_slice_file_name(const std::string &name)
{
    const std::string prefix = "slice_", suffix = ".dcm";
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    for (size_t i = prefix.size(); i < name.size() - suffix.size(); i++)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

struct directory_listing {
    bool exists = false, is_directory = false, only_slice_files = true;
    std::string foreign;  /* the first entry that is not a regular slice file */
    std::vector<std::string> entries;
};

directory_listing list_directory(const std::string &path)
{
    directory_listing listing;
    struct stat info;
    if (stat(path.c_str(), &info) != 0)
        return listing;
    listing.exists = true;
    listing.is_directory = S_ISDIR(info.st_mode);
    if (!listing.is_directory)
        return listing;
    DIR *dir = opendir(path.c_str());
    if (!dir)
        return listing;
    while (struct dirent *entry = readdir(dir)) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        listing.entries.push_back(entry->d_name);
        struct stat entry_info;
        std::string full = path + "/" + entry->d_name;
        if (listing.only_slice_files && (lstat(full.c_str(), &entry_info) != 0 || !S_ISREG(entry_info.st_mode) ||
                                         !is_slice_file_name(entry->d_name))) {
            listing.only_slice_files = false;
            listing.foreign = entry->d_name;
        }
    }
    closedir(dir);
    return listing;
}

void remove_directory_of_files(const std::string &path)
{
    for (const std::string &name : list_directory(path).entries)
        unlink((path + "/" + name).c_str());
    rmdir(path.c_str());
}

/* mkdir -p for the parent of the output directory. */
bool make_parents(const std::string &path)
{
    for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
        std::string prefix = path.substr(0, slash);
        if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
            return false;
    }
    return true;
}

struct series_identity {
    std::string study_uid, series_uid, frame_of_reference_uid, date, time;
};

vl_status write_slice(const std::string &file, const std::string &shown, const vl_volume *hu, int64_t k,
                      int bits_stored, const series_identity &id, const vl_dicom_write_options *options)
{
    DcmFileFormat format;
    DcmDataset *ds = format.getDataset();
    const vl_geometry &g = hu->geometry;
    double ipp[3];
    for (int r = 0; r < 3; r++)
        ipp[r] = g.origin[r] + g.direction[3 * r + 2] * g.spacing[2] * (double)k;
    std::string iop;
    for (int c = 0; c < 2; c++)
        for (int r = 0; r < 3; r++)
            iop += (iop.empty() ? "" : "\\") + decimal_string(g.direction[3 * r + c]);
    std::string position = decimal_string(ipp[0]) + "\\" + decimal_string(ipp[1]) + "\\" + decimal_string(ipp[2]);
    std::string spacing = decimal_string(g.spacing[1]) + "\\" + decimal_string(g.spacing[0]);
    std::string sop_uid = new_uid(SITE_INSTANCE_UID_ROOT);

    ds->putAndInsertString(DCM_SOPClassUID, UID_CTImageStorage);
    ds->putAndInsertString(DCM_SOPInstanceUID, sop_uid.c_str());
    ds->putAndInsertString(DCM_StudyInstanceUID, id.study_uid.c_str());
    ds->putAndInsertString(DCM_SeriesInstanceUID, id.series_uid.c_str());
    ds->putAndInsertString(DCM_FrameOfReferenceUID, id.frame_of_reference_uid.c_str());
    ds->putAndInsertString(DCM_PositionReferenceIndicator, "");
    ds->putAndInsertString(DCM_SpecificCharacterSet, "ISO_IR 100");
    ds->putAndInsertString(DCM_ImageType, "ORIGINAL\\PRIMARY\\AXIAL");
    ds->putAndInsertString(DCM_StudyDate, id.date.c_str());
    ds->putAndInsertString(DCM_StudyTime, id.time.c_str());
    ds->putAndInsertString(DCM_SeriesDate, id.date.c_str());
    ds->putAndInsertString(DCM_SeriesTime, id.time.c_str());
    ds->putAndInsertString(DCM_AccessionNumber, "");
    ds->putAndInsertString(DCM_Modality, "CT");
    ds->putAndInsertString(DCM_Manufacturer, "voxlabel");
    ds->putAndInsertString(DCM_ReferringPhysicianName, "");
    ds->putAndInsertString(DCM_StudyDescription,
                           options->study_description ? options->study_description : "voxlabel synthetic CT");
    ds->putAndInsertString(DCM_SeriesDescription,
                           options->series_description ? options->series_description : "voxlabel phantom");
    ds->putAndInsertString(DCM_PatientName, "VOXLABEL^PHANTOM");
    ds->putAndInsertString(DCM_PatientID, "VOXLABEL0001");
    ds->putAndInsertString(DCM_PatientBirthDate, "");
    ds->putAndInsertString(DCM_PatientSex, "O");
    ds->putAndInsertString(DCM_StudyID, "1");
    ds->putAndInsertString(DCM_SeriesNumber, std::to_string(options->series_number).c_str());
    ds->putAndInsertString(DCM_InstanceNumber, std::to_string(k + 1).c_str());
    ds->putAndInsertString(DCM_KVP, "120");
    ds->putAndInsertString(DCM_SliceThickness, decimal_string(g.spacing[2]).c_str());
    ds->putAndInsertString(DCM_ImagePositionPatient, position.c_str());
    ds->putAndInsertString(DCM_ImageOrientationPatient, iop.c_str());
    ds->putAndInsertString(DCM_SliceLocation, decimal_string(ipp[2]).c_str());
    ds->putAndInsertUint16(DCM_SamplesPerPixel, 1);
    ds->putAndInsertString(DCM_PhotometricInterpretation, "MONOCHROME2");
    ds->putAndInsertUint16(DCM_Rows, (Uint16)hu->ny);
    ds->putAndInsertUint16(DCM_Columns, (Uint16)hu->nx);
    ds->putAndInsertString(DCM_PixelSpacing, spacing.c_str());
    ds->putAndInsertUint16(DCM_BitsAllocated, 16);
    ds->putAndInsertUint16(DCM_BitsStored, (Uint16)bits_stored);
    ds->putAndInsertUint16(DCM_HighBit, (Uint16)(bits_stored - 1));
    ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
    ds->putAndInsertString(DCM_WindowCenter, "40");
    ds->putAndInsertString(DCM_WindowWidth, "400");
    ds->putAndInsertString(DCM_RescaleIntercept, "-1024");
    ds->putAndInsertString(DCM_RescaleSlope, "1");
    ds->putAndInsertString(DCM_RescaleType, "HU");

    int64_t count = hu->nx * hu->ny;
    const int16_t *source = (const int16_t *)hu->data + k * count;
    std::vector<Uint16> stored((size_t)count);
    for (int64_t i = 0; i < count; i++)
        stored[(size_t)i] = (Uint16)(source[i] + 1024);
    OFCondition condition = ds->putAndInsertUint16Array(DCM_PixelData, stored.data(), (unsigned long)count);
    if (condition.good())
        condition = format.saveFile(file.c_str(), EXS_LittleEndianExplicit);
    if (condition.bad())
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot write DICOM (disk full?): %s", shown.c_str(), condition.text());
    return VL_OK;
}

} // namespace

extern "C" void vl_dicom_write_options_default(vl_dicom_write_options *options)
{
    memset(options, 0, sizeof *options);
    options->series_number = 1;
}

extern "C" vl_status vl_dicom_write_series(const char *directory, const vl_volume *hu,
                                           const vl_dicom_write_options *options)
{
    vl_dicom_write_options defaults;
    if (!options) {
        vl_dicom_write_options_default(&defaults);
        options = &defaults;
    }
    if (!directory || !directory[0])
        return vl_fail(VL_ERR_ARGUMENT, "DICOM output: no directory given");
    if (!hu || !hu->data || hu->dtype != VL_I16)
        return vl_fail(VL_ERR_ARGUMENT, "%s: the volume to write must be I16 HU", directory);
    if (hu->nx > 65535 || hu->ny > 65535)
        return vl_fail(VL_ERR_ARGUMENT, "%s: %lldx%lld slices exceed DICOM's 65535 rows/columns", directory,
                       (long long)hu->nx, (long long)hu->ny);
    int64_t total = vl_volume_voxels(hu);
    int lo = 0, hi = 0;
    for (int64_t i = 0; i < total; i++) {
        int v = ((const int16_t *)hu->data)[i];
        lo = i == 0 || v < lo ? v : lo;
        hi = i == 0 || v > hi ? v : hi;
    }
    if (lo < -1024)
        return vl_fail(VL_ERR_ARGUMENT, "%s: HU %d is below -1024, which the stored values (HU + 1024) cannot hold",
                       directory, lo);
    int bits_stored = hi <= 3071 ? 12 : 16;

    std::string target(directory);
    while (target.size() > 1 && target.back() == '/')
        target.pop_back();
    /* A symbolic link names the directory it points to: the series is written there and the link stays. */
    struct stat link_info;
    if (lstat(target.c_str(), &link_info) == 0 && S_ISLNK(link_info.st_mode)) {
        char *resolved = realpath(target.c_str(), nullptr);
        if (!resolved)
            return vl_fail(VL_ERR_OUTPUT, "%s: is a symbolic link to nothing usable (%s); refusing to replace it",
                           directory, strerror(errno));
        target = resolved;
        free(resolved);
    }
    directory_listing existing = list_directory(target);
    if (existing.exists && !existing.is_directory)
        return vl_fail(VL_ERR_OUTPUT, "%s: exists and is not a directory", directory);
    if (existing.exists && !existing.entries.empty()) {
        if (!options->force)
            return vl_fail(VL_ERR_OUTPUT, "%s: directory is not empty (use --force to replace it)", directory);
        if (!existing.only_slice_files)
            return vl_fail(VL_ERR_OUTPUT,
                           "%s: holds '%s', which is not a slice_NNNN.dcm file that phantom writes; --force replaces "
                           "only those, so refusing to replace the directory",
                           directory, existing.foreign.c_str());
    }
    if (!make_parents(target))
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create its parent directories: %s", directory, strerror(errno));

    size_t slash = target.find_last_of('/');
    std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
    std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
    std::string pattern = parent + "/." + name + ".tmp.XXXXXX";
    std::vector<char> temp(pattern.begin(), pattern.end());
    temp.push_back('\0');
    if (!mkdtemp(temp.data()))
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create a temporary directory in %s: %s", directory, parent.c_str(),
                       strerror(errno));
    std::string temp_dir(temp.data());
    chmod(temp_dir.c_str(), 0755);

    vl_dicom_initialise();
    series_identity id;
    id.study_uid = new_uid(SITE_STUDY_UID_ROOT);
    id.series_uid = new_uid(SITE_SERIES_UID_ROOT);
    id.frame_of_reference_uid = new_uid(SITE_INSTANCE_UID_ROOT);
    time_t now = time(nullptr);
    struct tm parts;
    gmtime_r(&now, &parts);
    char text[32];
    strftime(text, sizeof text, "%Y%m%d", &parts);
    id.date = text;
    strftime(text, sizeof text, "%H%M%S", &parts);
    id.time = text;

    int digits = hu->nz >= 10000 ? (int)std::to_string(hu->nz).size() : 4;
    for (int64_t k = 0; k < hu->nz; k++) {
        char file_name[64];
        snprintf(file_name, sizeof file_name, "/slice_%0*lld.dcm", digits, (long long)(k + 1));
        vl_status status = write_slice(temp_dir + file_name, std::string(directory) + file_name, hu, k, bits_stored, id, options);
        if (status != VL_OK) {
            remove_directory_of_files(temp_dir);
            return status;
        }
        vl_progress_report(&options->progress, "writing", (double)(k + 1) / (double)hu->nz);
    }

    std::string old_dir;
    if (existing.exists && !existing.entries.empty()) {
        std::string old_pattern = parent + "/." + name + ".old.XXXXXX";
        std::vector<char> old(old_pattern.begin(), old_pattern.end());
        old.push_back('\0');
        if (!mkdtemp(old.data()) || rmdir(old.data()) != 0 || rename(target.c_str(), old.data()) != 0) {
            int error = errno;
            remove_directory_of_files(temp_dir);
            return vl_fail(VL_ERR_OUTPUT, "%s: cannot move the old directory aside: %s", directory, strerror(error));
        }
        old_dir = old.data();
    }
    if (rename(temp_dir.c_str(), target.c_str()) != 0) {
        int error = errno;
        remove_directory_of_files(temp_dir);
        if (!old_dir.empty())
            rename(old_dir.c_str(), target.c_str());
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot rename the finished series into place: %s", directory,
                       strerror(error));
    }
    if (!old_dir.empty())
        remove_directory_of_files(old_dir);
    return VL_OK;
}
