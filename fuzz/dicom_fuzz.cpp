// libFuzzer harness for the single-file DICOM readers: each input is written to a file and read as a
// CT series (scan, group, geometry, decode) and as a colour image. Any crash, hang, leak or sanitizer
// report is a bug; an error status is the expected answer for garbage.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "voxlabel/dicom.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static std::string path = [] {
        std::string name = (std::filesystem::temp_directory_path() / "vl_dicom_fuzz_XXXXXX").string();
        int fd = mkstemp(name.data());
        if (fd >= 0)
            close(fd);
        return name;
    }();
    FILE *file = fopen(path.c_str(), "wb");
    if (!file)
        return 0;
    fwrite(data, 1, size, file);
    fclose(file);

    vl_dicom_read_options options;
    vl_dicom_read_options_default(&options);
    options.threads = 1;
    options.on_irregular = VL_IRREGULAR_WARN;
    vl_volume volume;
    vl_dicom_report report;
    if (vl_dicom_read_series(path.c_str(), &options, &volume, &report) == VL_OK)
        vl_volume_free(&volume);
    vl_dicom_report_free(&report);

    vl_dicom_rgb rgb;
    if (vl_dicom_read_rgb(path.c_str(), &rgb) == VL_OK)
        vl_dicom_rgb_free(&rgb);
    return 0;
}
