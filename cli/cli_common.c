#define _GNU_SOURCE /* vasprintf */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "voxlabel/threads.h"

static int progress_enabled;
static int quiet_mode;

/* The one terminal escaping (issue 16 B11): writes `text` with every control byte (below 0x20, and 0x7f) as
 * \xHH, so a file name or header text cannot move the cursor, set the title or split the line. */
void cli_write_escaped(FILE *out, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
    }
}

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0 when the bytes there are not one (a stray
 * continuation byte, a truncated sequence, an overlong form, a surrogate, or above U+10FFFF). */
static int utf8_sequence_length(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    int n = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3 : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
        (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

/* The one JSON string writer (issue 16 B11): "text" with ", \ and control bytes escaped as JSON requires;
 * well-formed UTF-8 is kept as it is, and every byte that is not part of a well-formed sequence becomes
 * \ufffd (U+FFFD, the replacement character, as Python's errors="replace" does), so the file is always
 * valid UTF-8 even when a path is not. */
void cli_json_write_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        int n = utf8_sequence_length(c);
        if (n == 0) {
            fputs("\\ufffd", out);
            c++;
        } else if (*c == '"' || *c == '\\') {
            fprintf(out, "\\%c", *c);
            c++;
        } else if (*c < 0x20 || *c == 0x7f) {
            fprintf(out, "\\u%04x", *c);
            c++;
        } else {
            fwrite(c, 1, (size_t)n, out);
            c += n;
        }
    }
    fputc('"', out);
}

void cli_json_write_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.17g", value);
    else
        fputs("null", out);
}

void cli_json_write_device(FILE *out, vl_device_kind requested, const vl_label_result *result)
{
    fprintf(out, "{\"requested\": \"%s\", \"used\": \"%s\", \"name\": ", vl_device_kind_name(requested),
            vl_device_kind_name(result->outcome.used));
    cli_json_write_string(out, result->device_name);
    fprintf(out, ", \"fallback_reason\": ");
    cli_json_write_string(out, result->outcome.fallback_reason);
    fputc('}', out);
}

int cli_take_operand(const char *argument, const char **slot, const char *which)
{
    if (*slot)
        return cli_error(CLI_EXIT_USAGE, "%s: unexpected extra argument (%s)", argument, which);
    *slot = argument;
    return 0;
}

static _Thread_local char last_error[1024];

const char *cli_last_error(void)
{
    return last_error;
}

/* One diagnostic line "voxlabel: <kind>: <formatted>", escaped, never cut. */
static void print_line(const char *kind, const char *format, va_list args)
{
    char *text = NULL;
    if (vasprintf(&text, format, args) < 0)
        text = NULL;
    if (strcmp(kind, "error") == 0)
        snprintf(last_error, sizeof last_error, "%s", text ? text : format);
    fprintf(stderr, "voxlabel: %s: ", kind);
    cli_write_escaped(stderr, text ? text : format);
    fputc('\n', stderr);
    free(text);
}

int cli_error(int exit_code, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    print_line("error", format, args);
    va_end(args);
    return exit_code;
}

int cli_status_error(vl_status status)
{
    const char *detail = vl_last_error();
    return cli_error(vl_status_exit_code(status), "%s", detail[0] ? detail : vl_status_name(status));
}

void cli_warning(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    print_line("warning", format, args);
    va_end(args);
}

void cli_note(const char *format, ...)
{
    if (quiet_mode)
        return;
    va_list args;
    va_start(args, format);
    print_line("note", format, args);
    va_end(args);
}

void cli_progress_configure(int force_on, int quiet)
{
    quiet_mode = quiet;
    progress_enabled = !quiet && (force_on || isatty(STDERR_FILENO));
}

int cli_is_quiet(void)
{
    return quiet_mode;
}

/* Redraws one line per stage; finishes the line when the stage reaches 1. */
static void draw_progress(const char *stage, double fraction, void *user)
{
    (void)user;
    static char last_stage[64];
    static int last_percent = -1;
    int percent = (int)floor(fraction * 100.0 + 1e-9);
    if (strncmp(stage, last_stage, sizeof last_stage) == 0 && percent == last_percent)
        return;
    strncpy(last_stage, stage, sizeof last_stage - 1);
    last_percent = percent;
    const int width = 30;
    int filled = percent * width / 100;
    fprintf(stderr, "\r%-12s [%.*s%*s] %3d%%", stage, filled, "##############################", width - filled, "",
            percent);
    if (percent >= 100) {
        fputc('\n', stderr);
        last_stage[0] = '\0';
        last_percent = -1;
    }
    fflush(stderr);
}

vl_progress cli_progress(void)
{
    vl_progress progress = {progress_enabled ? draw_progress : NULL, NULL};
    return progress;
}

int cli_parse_int64(const char *option, const char *text, int64_t min, int64_t max, int64_t *value)
{
    char *end = NULL;
    errno = 0;
    long long parsed = strtoll(text, &end, 10);
    if (errno || end == text || *end != '\0')
        return cli_error(CLI_EXIT_USAGE, "%s: '%s' is not a whole number", option, text);
    if (parsed < min || parsed > max)
        return cli_error(CLI_EXIT_USAGE, "%s: %lld is outside %lld..%lld", option, parsed, (long long)min,
                         (long long)max);
    *value = parsed;
    return 0;
}

int cli_parse_double(const char *option, const char *text, double *value)
{
    char *end = NULL;
    errno = 0;
    double parsed = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !isfinite(parsed))
        return cli_error(CLI_EXIT_USAGE, "%s: '%s' is not a number", option, text);
    *value = parsed;
    return 0;
}

int cli_parse_bytes(const char *option, const char *text, uint64_t *bytes)
{
    static const char units[] = "KMG";
    char *end = NULL;
    errno = 0;
    unsigned long long parsed = isdigit((unsigned char)text[0]) ? strtoull(text, &end, 10) : 0;
    int shift = 0;
    if (end && *end) {
        const char *unit = strchr(units, toupper((unsigned char)*end));
        shift = unit && end[1] == '\0' ? 10 * (int)(unit - units + 1) : -1;
    }
    if (!end || errno || shift < 0)
        return cli_error(CLI_EXIT_USAGE, "%s: '%s' is not a size (bytes, or a whole number with K, M or G: 8G)",
                         option, text);
    if (parsed == 0 || parsed > (UINT64_MAX >> shift))
        return cli_error(CLI_EXIT_USAGE, "%s: '%s' is not a size above 0 that fits in 64 bits", option, text);
    *bytes = (uint64_t)parsed << shift;
    return 0;
}

const char *cli_option_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc || argv[*i + 1][0] == '\0') {
        cli_error(CLI_EXIT_USAGE, "%s: needs a value (see 'voxlabel %s --help')", argv[*i], argv[0]);
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

int cli_option_index(const char *option, const char *const *names, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (strcmp(option, names[k]) == 0)
            return (int)k;
    return -1;
}

int cli_parse_run_flag(const char *option, int *force, int *quiet, int *progress)
{
    int *flag = strcmp(option, "--force") == 0                               ? force
                : strcmp(option, "--quiet") == 0 || strcmp(option, "-q") == 0 ? quiet
                : strcmp(option, "--progress") == 0                          ? progress
                                                                              : NULL;
    if (flag)
        *flag = 1;
    return flag != NULL;
}

int cli_parse_threads(const char *text, int *threads)
{
    int64_t value = 0;
    if (cli_parse_int64("--threads", text, 1, 64, &value))
        return CLI_EXIT_USAGE;
    *threads = (int)value;
    vl_set_thread_limit(*threads);
    return 0;
}

int cli_parse_device(const char *text, vl_device *device)
{
    return vl_device_parse(text, device) == VL_OK ? 0 : cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
}

void cli_report_device(const vl_device_outcome *outcome, const char *stage, int noted_fallback)
{
    char text[512];
    vl_device_notice notice = vl_device_outcome_notice(outcome, stage, text, sizeof text);
    if (notice == VL_DEVICE_NOTICE_WARNING)
        cli_warning("%s", text);
    else if (notice == VL_DEVICE_NOTICE_NOTE && noted_fallback)
        cli_note("%s", text);
}
