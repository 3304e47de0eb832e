/* Shared pieces of the voxlabel command line: errors, warnings, progress, option parsing helpers. */
#ifndef VL_CLI_H
#define VL_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "voxlabel/error.h"
#include "voxlabel/label.h"
#include "voxlabel/progress.h"

/* Exit codes of docs/design.md §8. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 2, CLI_EXIT_INPUT = 3, CLI_EXIT_OUTPUT = 4, CLI_EXIT_DEVICE = 5 };

/* Prints "voxlabel: error: <what>: <why>" and returns `exit_code`. */
int cli_error(int exit_code, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* The text of this thread's last error line (without "voxlabel: error: "), "" before any. */
const char *cli_last_error(void);
/* Writes text with control bytes as \xHH (the escaping every diagnostic line goes through, issue 16 B11). */
void cli_write_escaped(FILE *out, const char *text);
/* Writes text as a JSON string that is valid UTF-8 (bytes outside well-formed UTF-8 become \ufffd). */
void cli_json_write_string(FILE *out, const char *text);
/* A JSON number (%.17g: a double read back exactly), or null when it is not finite. */
void cli_json_write_number(FILE *out, double value);
/* summary.json's "device" object: the kind asked for, the kind that ran, the GPU's name and why AUTO fell
 * back. */
void cli_json_write_device(FILE *out, vl_device_kind requested, const vl_label_result *result);
/* Takes a command's positional argument into *slot, or refuses a second one; `which` says what the command
 * takes, e.g. "one INPUT only". Returns 0 or the usage error's exit code. */
int cli_take_operand(const char *argument, const char **slot, const char *which);
/* Prints the library's last error for `status` and returns the matching exit code. */
int cli_status_error(vl_status status);
void cli_warning(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* "voxlabel: note: ..." for things the user should know that are not problems. */
void cli_note(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Progress: drawn on stderr when it is a TTY or --progress was given, never with --quiet. */
void cli_progress_configure(int force_on, int quiet);
vl_progress cli_progress(void);
int cli_is_quiet(void);

/* Strict number parsing: the whole string must be a number in range, else a usage error naming `option`. */
int cli_parse_int64(const char *option, const char *text, int64_t min, int64_t max, int64_t *value);
int cli_parse_double(const char *option, const char *text, double *value);
/* A byte count: a whole number with an optional K, M or G (powers of 1024), e.g. 512M or 8G. */
int cli_parse_bytes(const char *option, const char *text, uint64_t *bytes);

/* Parses --threads: a whole number from 1 to 64 into *threads, also the cap on the whole process's worker
 * threads (vl_set_thread_limit). Returns 0, or prints the usage error and returns its code. */
int cli_parse_threads(const char *text, int *threads);
/* Parses --device: auto, cpu, gpu or gpu:N (kind and index; the memory budget is kept). */
int cli_parse_device(const char *text, vl_device *device);
/* Prints what the device policy's `outcome` of `stage` ("labelled", ...) tells the user: a note when AUTO
 * found no usable GPU (only when `noted_fallback` is set), a warning when a usable GPU failed. */
void cli_report_device(const vl_device_outcome *outcome, const char *stage, int noted_fallback);

/* Returns the option's value (argv[*i + 1]) and advances *i, or NULL after printing a usage error. */
const char *cli_option_value(int argc, char **argv, int *i);
/* The index of `option` in names[0..count), or -1 when it is none of them. */
int cli_option_index(const char *option, const char *const *names, size_t count);
/* The flags most commands share: --force, --quiet (-q) and --progress set *force, *quiet or *progress to 1.
 * Returns 1 when `option` was one of them, 0 otherwise. */
int cli_parse_run_flag(const char *option, int *force, int *quiet, int *progress);

typedef int (*cli_command_fn)(int argc, char **argv);

/* One function per subcommand, each in cli/cmd_<name>.c; argv[0] is the subcommand name. */
int cmd_label(int argc, char **argv);
int cmd_phantom(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_color(int argc, char **argv);
int cmd_shapes(int argc, char **argv);
int cmd_preview(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_seg(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_cut(int argc, char **argv);
int cmd_background(int argc, char **argv);
int cmd_features(int argc, char **argv);
int cmd_match(int argc, char **argv);
int cmd_register_slices(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_classify(int argc, char **argv);

#endif
