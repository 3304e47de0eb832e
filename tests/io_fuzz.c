/* Fuzz (deterministic mutations): valid NIfTI, NRRD, MetaImage, MAT and raw files with flipped bytes, random
 * truncations and absurd header numbers must read as a clean error or a valid volume, never crash or hang.
 * usage: io_fuzz WORK_DIR [MUTATIONS_PER_FILE] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_check.h"
#include "voxlabel/io.h"

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n + 1);
    *size = fread(data, 1, (size_t)n, f);
    fclose(f);
    return data;
}

static int spill(const char *path, const unsigned char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f)
        ok &= fclose(f) == 0;
    CHECK(ok, "cannot write %s", path);
    return ok;
}

/* Replaces a run of digits in a text header by a random (often huge or zero) number. */
static size_t mutate_number(unsigned char *data, size_t size, size_t header_end, unsigned char *out)
{
    size_t start = next_random() % (header_end ? header_end : 1);
    while (start < header_end && !(data[start] >= '0' && data[start] <= '9'))
        start++;
    size_t end = start;
    while (end < header_end && data[end] >= '0' && data[end] <= '9')
        end++;
    static const char *replacements[] = {"0", "-1", "99999999999", "4294967296", "2147483647", "1e308", "nan", ""};
    const char *r = replacements[next_random() % (sizeof replacements / sizeof replacements[0])];
    size_t n = strlen(r);
    memcpy(out, data, start);
    memcpy(out + start, r, n);
    memcpy(out + start + n, data + end, size - end);
    return size - (end - start) + n;
}

static void fuzz_file(const char *path, const char *mutant, int mutations, int text_header)
{
    size_t size;
    unsigned char *data = slurp(path, &size);
    CHECK(data != NULL, "cannot read %s", path);
    if (!data)
        return;
    size_t header_end = size;
    if (text_header) { /* NRRD headers end at a blank line, MetaImage ones after "ElementDataFile = LOCAL" */
        data[size] = '\0';
        const char *blank = strstr((const char *)data, "\n\n"), *local = strstr((const char *)data, "LOCAL\n");
        const char *end = blank ? blank : local;
        if (end)
            header_end = (size_t)(end - (const char *)data);
    }
    unsigned char *buffer = malloc(size + 64);
    int accepted = 0, refused = 0;
    for (int m = 0; m < mutations; m++) {
        size_t n = size;
        memcpy(buffer, data, size);
        switch (next_random() % 4) {
        case 0: /* truncate */
            n = next_random() % size;
            break;
        case 1: /* flip bytes in the first 512 (headers) */
            for (int k = 0, flips = 1 + (int)(next_random() % 8); k < flips; k++)
                buffer[next_random() % (size < 512 ? size : 512)] ^= (unsigned char)(1u << (next_random() % 8));
            break;
        case 2: /* flip bytes anywhere */
            for (int k = 0, flips = 1 + (int)(next_random() % 16); k < flips; k++)
                buffer[next_random() % size] = (unsigned char)next_random();
            break;
        default:
            if (text_header)
                n = mutate_number(data, size, header_end, buffer);
            else
                for (int k = 0; k < 4; k++)
                    buffer[next_random() % (size < 352 ? size : 352)] = 0xff;
        }
        if (!spill(mutant, buffer, n))
            break;
        vl_read_options options;
        vl_read_options_default(&options);
        options.format = vl_file_format_from_path(path);
        options.raw_nx = 7;
        options.raw_ny = 5;
        options.raw_nz = 3;
        options.raw_dtype = VL_U16;
        vl_volume v;
        vl_status s = vl_read_volume(mutant, &options, &v);
        if (s == VL_OK) {
            accepted++;
            vl_volume_free(&v);
        } else {
            refused++;
            CHECK(vl_last_error()[0] != '\0', "%s mutation %d refused without a message", path, m);
            if (vl_last_error()[0] == '\0')
                break;
        }
    }
    printf("%-40s %d mutations: %d read, %d refused with a message\n", strrchr(path, '/') + 1, mutations, accepted,
           refused);
    free(buffer);
    free(data);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *dir = argv[1];
    int mutations = argc > 2 ? atoi(argv[2]) : 300;
    char command[4200];
    snprintf(command, sizeof command, "mkdir -p '%.4000s'", dir);
    if (system(command) != 0)
        return 2;
    vl_volume v;
    CHECK(vl_volume_create(&v, 7, 5, 3, VL_U16) == VL_OK, "cannot allocate the seed volume");
    if (failures)
        return test_finish("io_fuzz");
    for (int64_t i = 0; i < vl_volume_voxels(&v); i++)
        ((uint16_t *)v.data)[i] = (uint16_t)(i * 977);
    const char *names[] = {"seed.nii", "seed.nii.gz", "seed.nrrd", "seed.mha", "seed.mat", "seed.raw"};
    const int text[] = {0, 0, 1, 1, 0, 0};
    for (int f = 0; f < 6; f++) {
        char path[4200], mutant[4300];
        snprintf(path, sizeof path, "%.4000s/%s", dir, names[f]);
        snprintf(mutant, sizeof mutant, "%.4000s/mutant_%s", dir, names[f]);
        vl_write_options wo;
        vl_write_options_default(&wo);
        wo.force = 1;
        wo.mat_class = VL_MAT_NATIVE;
        const vl_status written = vl_write_volume(path, &v, &wo);
        CHECK(written == VL_OK, "cannot write %s", path);
        if (written != VL_OK)
            continue;
        unlink(mutant);
        fuzz_file(path, mutant, mutations, text[f]);
    }
    vl_volume_free(&v);
    return test_finish("io_fuzz");
}
