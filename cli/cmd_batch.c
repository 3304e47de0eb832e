/* voxlabel batch: every CT series under a folder through the label pipeline, into one folder per series, with
 * a cohort table; resumable, shardable (--shard I/N, --merge) and pipelined (docs/cohorts.md). */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch_cohort.h"
#include "batch_events.h"
#include "batch_pipeline.h"
#include "batch_series.h"
#include "cli.h"
#include "cli_gpu_warm_up.h"
#include "label_run.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/threads.h"
#include "voxlabel/voxlabel.h"

static const char batch_help[] =
    "usage: voxlabel batch ROOT -o OUT (--threshold LO[:HI] | --preset NAME) [label options] [batch options]\n"
    "       voxlabel batch --merge OUT... [-o MERGED]\n"
    "\n"
    "Finds every DICOM series under ROOT (recursively; DICOMDIR files are not needed) and runs 'voxlabel label'\n"
    "with the same label options on each CT series: OUT/PATIENT/STUDY/SERIES/ gets labels.nii.gz,\n"
    "components.csv and summary.json as usual, plus series.csv (its cohort row) and timings.json.\n"
    "OUT/cohort.csv has one row per series found (labelled, skipped with the reason, or failed with the error\n"
    "line); OUT/cohort.jsonl logs what happened and when. Localizers, secondary captures, colour images,\n"
    "non-CT series and series with too few slices are skipped. A failing series does not stop the run.\n"
    "\n"
    "Run it again to resume: series whose outputs are complete for the same label options are kept, the others\n"
    "are done (again). Columns and the cluster recipes: docs/cohorts.md.\n"
    "\n"
    "label options: as 'voxlabel label' (see 'voxlabel label --help'): --threshold, --preset, --conn, --order,\n"
    "  --open, --close, --min-size, --largest, --device, --gpu-memory, --threads, --format, --mat-class, --stats,\n"
    "  --matlab, --preview, --on-irregular\n"
    "batch options:\n"
    "  --shard I/N                this run's share of the series (I = 1..N, e.g. $SLURM_ARRAY_TASK_ID/N): every\n"
    "                             N-th series in folder order; writes OUT/cohort-shard-I-of-N.csv (and .jsonl)\n"
    "  --merge OUT...             combine the shard tables found in the OUT folders into MERGED/cohort.csv\n"
    "                             (MERGED: -o, default the first OUT); fails when a shard is missing\n"
    "  --jobs N                   label N series at once in N processes (default 1: one series at a time,\n"
    "                             every core on it); the cores are shared among the jobs\n"
    "  --prefetch N               series read and decoded ahead of the one being labelled (default 1;\n"
    "                             0: read each series only when its turn comes)\n"
    "  --write-behind N           series written behind the labelling, N at once by N writer threads (default\n"
    "                             1; 0: write each series before labelling the next)\n"
    "  --write-threads N          threads compressing each labels file (default: every core); the bytes are the\n"
    "                             same for any N\n"
    "  --min-slices N             skip series with fewer slices (default 3)\n"
    "  --force                    redo series whose outputs were made with other label options\n"
    "                             (otherwise such a series is an error and OUT is left as it is)\n"
    "  --quiet                    no progress lines (warnings and errors still print)\n"
    "\n"
    "exit status: 0 when every CT series was labelled (skipped ones do not count), 3 when any failed (input),\n"
    "4 or 5 when the worst failure was an output or a device/memory one; 2 for a usage error.\n"
    "\n"
    "examples:\n"
    "  voxlabel batch /data/pacs_export --preset bone -o cohort/\n"
    "  voxlabel batch /data/pacs_export --preset bone -o cohort/          # again: resumes, skips finished series\n"
    "  voxlabel batch /data/tcia --threshold -950:-400 --largest 2 --jobs 4 -o lungs/\n"
    "  voxlabel batch /data/tcia --preset bone --shard 3/16 -o cohort/    # one Slurm array task\n"
    "  voxlabel batch --merge cohort/                                     # after all 16 shards\n";

typedef struct batch_arguments {
    const char *root, *out, *merge[256];
    int merge_count, merging;
    int shard, shards, jobs, depth, write_depth, write_threads, force, quiet;
    int64_t min_slices;
    char *label_argv[256];
    int label_argc;
    uint64_t options_hash;
} batch_arguments;

/* Options of `voxlabel label` that do not change any output byte: left out of the options hash. */
static int hash_skips(const char *option, int *with_value)
{
    static const char *const valued[] = {"--device", "--gpu-memory", "--threads"};
    static const char *const flags[] = {"--progress", "--quiet", "-q"};
    *with_value = cli_option_index(option, valued, sizeof valued / sizeof valued[0]) >= 0;
    return *with_value || cli_option_index(option, flags, sizeof flags / sizeof flags[0]) >= 0;
}

static int parse_shard(const char *text, int *shard, int *shards)
{
    char tail;
    if (sscanf(text, "%d/%d%c", shard, shards, &tail) != 2 || *shards < 1 || *shards > 100000 || *shard < 1 ||
        *shard > *shards)
        return cli_error(CLI_EXIT_USAGE, "--shard: '%s' is not I/N with 1 <= I <= N (e.g. 3/16)", text);
    return 0;
}

static int parse_arguments(int argc, char **argv, batch_arguments *args)
{
    memset(args, 0, sizeof *args);
    args->jobs = 1;
    args->depth = 1;
    args->write_depth = 1;
    args->min_slices = 3;
    args->shard = args->shards = 1;
    args->label_argv[args->label_argc++] = "label";
    uint64_t hash = batch_hash_bytes(BATCH_HASH_START, vl_version(), strlen(vl_version()) + 1);
    int sharded = 0;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        int64_t number;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            fputs(batch_help, stdout);
            exit(CLI_EXIT_OK);
        } else if (strcmp(option, "--merge") == 0) {
            args->merging = 1;
        } else if (strcmp(option, "--force") == 0) {
            args->force = 1;
        } else if (strcmp(option, "--quiet") == 0 || strcmp(option, "-q") == 0) {
            args->quiet = 1;
        } else if (strcmp(option, "--progress") == 0) {
            args->quiet = 0;
        } else if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
            if (!(args->out = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(option, "--shard") == 0) {
            const char *value = cli_option_value(argc, argv, &i);
            if (!value || parse_shard(value, &args->shard, &args->shards))
                return CLI_EXIT_USAGE;
            sharded = 1;
        } else if (strcmp(option, "--write-threads") == 0) {
            const char *value = cli_option_value(argc, argv, &i);
            if (!value || cli_parse_int64(option, value, 1, 1024, &number))
                return CLI_EXIT_USAGE;
            args->write_threads = (int)number;
        } else if (strcmp(option, "--jobs") == 0 || strcmp(option, "--prefetch") == 0 ||
                   strcmp(option, "--write-behind") == 0 || strcmp(option, "--min-slices") == 0) {
            const char *value = cli_option_value(argc, argv, &i);
            const int depth_option = option[2] == 'p' || option[2] == 'w';
            const int64_t most = option[2] == 'j' ? 64 : depth_option ? 8 : 100000;
            if (!value || cli_parse_int64(option, value, depth_option ? 0 : 1, most, &number))
                return CLI_EXIT_USAGE;
            if (option[2] == 'j')
                args->jobs = (int)number;
            else if (option[2] == 'p')
                args->depth = (int)number;
            else if (option[2] == 'w')
                args->write_depth = (int)number;
            else
                args->min_slices = number;
        } else if (strcmp(option, "--series") == 0 || strcmp(option, "--raw-dims") == 0 ||
                   strcmp(option, "--raw-type") == 0) {
            return cli_error(CLI_EXIT_USAGE, "%s: not for batch, which labels every CT series under ROOT", option);
        } else if (option[0] == '-' && option[1] != '\0') {
            /* A label option: handed to label's parser, which checks it; its value follows when it has one. */
            if (args->label_argc + 2 >= (int)(sizeof args->label_argv / sizeof args->label_argv[0]))
                return cli_error(CLI_EXIT_USAGE, "too many options");
            int with_value;
            const int skipped = hash_skips(option, &with_value);
            args->label_argv[args->label_argc++] = argv[i];
            /* Every label option but these two flags takes the next argument as its value, as label's parser does. */
            const int takes = strcmp(option, "--matlab") && strcmp(option, "--preview");
            if (!skipped)
                hash = batch_hash_bytes(hash, option, strlen(option) + 1);
            if (takes && i + 1 < argc) {
                args->label_argv[args->label_argc++] = argv[++i];
                if (!skipped)
                    hash = batch_hash_bytes(hash, argv[i], strlen(argv[i]) + 1);
            }
        } else if (args->merging) {
            if (args->merge_count == (int)(sizeof args->merge / sizeof args->merge[0]))
                return cli_error(CLI_EXIT_USAGE, "--merge: at most 256 folders");
            args->merge[args->merge_count++] = option;
        } else {
            const int code = cli_take_operand(option, &args->root, "one ROOT only");
            if (code)
                return code;
        }
    }
    args->options_hash = hash;
    if (args->merging) {
        if (args->root || sharded)
            return cli_error(CLI_EXIT_USAGE, "--merge takes only the OUT folders of the shards (and -o)");
        if (!args->merge_count)
            return cli_error(CLI_EXIT_USAGE, "--merge: name the OUT folder(s) that hold cohort-shard-I-of-N.csv");
        return 0;
    }
    if (!args->root)
        return cli_error(CLI_EXIT_USAGE, "batch: missing ROOT, the folder to search for series (see 'voxlabel batch "
                                         "--help')");
    if (!args->out)
        return cli_error(CLI_EXIT_USAGE, "batch: missing -o OUT (where the series folders and cohort.csv go)");
    return 0;
}

static int run_merge(const batch_arguments *args)
{
    const char *target = args->out ? args->out : args->merge[0];
    char path[VL_PATH_MAX];
    snprintf(path, sizeof path, "%s/cohort.csv", target);
    struct stat info;
    if (args->out && stat(args->out, &info) != 0 && batch_make_directories(args->out) != 0)
        return cli_error(CLI_EXIT_OUTPUT, "%s: cannot create the folder", args->out);
    vl_status status = batch_cohort_merge(path, args->merge, args->merge_count);
    if (status != VL_OK)
        return cli_status_error(status);
    if (!args->quiet)
        printf("wrote %s\n", path);
    return CLI_EXIT_OK;
}

/* Runs `work` in `jobs` processes, each with every jobs-th pending series; returns the worst exit code. */
static int run_jobs(batch_work *work, int jobs)
{
    if (jobs <= 1 || work->pending_count <= 1)
        return batch_work_run(work);
    fflush(NULL);
    pid_t children[64];
    const pid_t parent = getpid();
    int started = 0, worst = 0;
    for (int j = 0; j < jobs; j++) {
        pid_t pid = fork();
        if (pid < 0) {
            worst = cli_error(CLI_EXIT_DEVICE, "batch: cannot start job %d of %d", j + 1, jobs);
            break;
        }
        if (pid == 0) {
            /* A job ends with the run that started it (killed or not), so a rerun never meets it still writing. */
            if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
                _exit(CLI_EXIT_DEVICE);
            size_t *mine = malloc(work->pending_count * sizeof *mine), count = 0;
            if (!mine)
                _exit(CLI_EXIT_DEVICE);
            for (size_t p = (size_t)j; p < work->pending_count; p += (size_t)jobs)
                mine[count++] = work->pending[p];
            char name[32];
            snprintf(name, sizeof name, "job %d/%d ", j + 1, jobs);
            batch_work own = *work;
            own.pending = mine;
            own.pending_count = count;
            own.worker_name = name;
            int code = batch_work_run(&own);
            fflush(NULL);
            _exit(code);
        }
        children[started++] = pid;
    }
    for (int c = 0; c < started; c++) {
        int status;
        while (waitpid(children[c], &status, 0) < 0)
            ;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_DEVICE;
        if (!WIFEXITED(status))
            cli_error(CLI_EXIT_DEVICE, "batch: job %d of %d ended by signal %d; its unfinished series are "
                      "recorded as not finished", c + 1, jobs, WTERMSIG(status));
        worst = code > worst ? code : worst;
    }
    return worst;
}

int cmd_batch(int argc, char **argv)
{
    batch_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code;
    if (args.merging)
        return run_merge(&args);

    /* ROOT without trailing slashes, so that the series' paths in summary.json do not depend on how it was typed. */
    enum { most_out = 2048 }; /* leaves room for PATIENT/STUDY/SERIES/file under VL_PATH_MAX */
    char root[VL_PATH_MAX], out[most_out];
    if (strlen(args.root) >= sizeof root || strlen(args.out) >= sizeof out)
        return cli_error(CLI_EXIT_USAGE, "batch: ROOT or OUT path is too long");
    snprintf(root, sizeof root, "%s", args.root);
    snprintf(out, sizeof out, "%s", args.out);
    for (char *text = root; text; text = text == root ? out : NULL) {
        size_t length = strlen(text);
        while (length > 1 && text[length - 1] == '/')
            text[--length] = '\0';
    }
    args.label_argv[args.label_argc++] = root;
    args.label_argv[args.label_argc++] = "-o";
    args.label_argv[args.label_argc++] = out;
    /* Discovery finds CT series, never class maps, so the class-map mode has nothing to label here. */
    for (int i = 0; i < args.label_argc; i++)
        if (strcmp(args.label_argv[i], "--multilabel") == 0)
            return cli_error(CLI_EXIT_USAGE, "--multilabel: batch labels CT series; label each class map with "
                                             "'voxlabel label CLASSMAP --multilabel'");
    label_arguments *label = label_arguments_parse(args.label_argc, args.label_argv, &code);
    if (!label)
        return code;
    /* Per-series bars, notes and summaries would bury the one line per series: label runs quiet. */
    cli_progress_configure(0, 1);

    int result = CLI_EXIT_OK;
    cli_gpu_warm_up gpu_warm_up = {0};
    vl_dicom_scan scan = {0};
    batch_series_list list = {0};
    size_t *pending = NULL;
    char options_hash[17], table[VL_PATH_MAX], log[VL_PATH_MAX], stem[64] = "cohort";
    snprintf(options_hash, sizeof options_hash, "%016llx", (unsigned long long)args.options_hash);
    if (args.shards > 1)
        snprintf(stem, sizeof stem, "cohort-shard-%d-of-%d", args.shard, args.shards);

    struct stat info;
    if (stat(out, &info) != 0 && batch_make_directories(out) != 0) {
        result = cli_error(CLI_EXIT_OUTPUT, "%s: cannot create the output folder", out);
        goto done;
    }
    if (stat(out, &info) != 0 || !S_ISDIR(info.st_mode)) {
        result = cli_error(CLI_EXIT_OUTPUT, "%s: exists and is not a folder", out);
        goto done;
    }
    snprintf(table, sizeof table, "%s/%s.csv", out, stem);
    snprintf(log, sizeof log, "%s/%s.jsonl", out, stem);
    if ((result = batch_events_open(log)))
        goto done;
    vl_staging_sweep(out);

    /* The GPU's context takes a while to create: it is made while discovery reads the headers, not on the first
     * series' labelling. Not with several jobs, which fork from this process (a CUDA context does not survive
     * a fork). */
    if (args.jobs == 1)
        cli_gpu_warm_up_start(&gpu_warm_up, label_arguments_device(label));
    if (!args.quiet)
        fprintf(stderr, "voxlabel: scanning %s ...\n", root);
    vl_dicom_read_options scan_options;
    vl_dicom_read_options_default(&scan_options);
    vl_status status = vl_dicom_scan_path(root, &scan_options, &scan);
    if (status == VL_OK)
        status = batch_series_list_build(&scan, args.min_slices, &list);
    if (status != VL_OK) {
        result = cli_status_error(status);
        goto done;
    }

    char labels_file[64];
    label_arguments_labels_file(label, labels_file, sizeof labels_file);
    pending = malloc((list.count ? list.count : 1) * sizeof *pending);
    if (!pending) {
        result = cli_error(CLI_EXIT_DEVICE, "batch: out of memory");
        goto done;
    }
    size_t pending_count = 0, in_share = 0, skipped = 0, complete = 0, other_options = 0;
    for (size_t s = 0; s < list.count; s++) {
        if (!batch_series_in_shard(s, args.shard, args.shards))
            continue;
        in_share++;
        const batch_series *series = &list.items[s];
        char *fields = NULL;
        if (series->skip_reason[0]) {
            skipped++;
            batch_json_string(&fields, "folder", series->folder);
            batch_json_string(&fields, "series_uid", series->info->series_uid);
            batch_json_string(&fields, "reason", series->skip_reason);
            batch_event("skipped", fields);
            free(fields);
            continue;
        }
        char directory[VL_PATH_MAX];
        snprintf(directory, sizeof directory, "%s/%s", out, series->folder);
        const int state = batch_series_complete(directory, options_hash, labels_file);
        if (state == 1) {
            complete++;
            continue;
        }
        if (state == -1 && !args.force) {
            other_options++;
            if (other_options == 1)
                cli_error(CLI_EXIT_OUTPUT, "%s: holds the outputs of other label options; use --force to redo it "
                          "with these, or another -o", directory);
            continue;
        }
        pending[pending_count++] = s;
    }
    if (other_options) {
        result = cli_error(CLI_EXIT_OUTPUT, "%s: %zu series were labelled with other options; nothing done", out,
                           other_options);
        goto done;
    }
    char *fields = NULL;
    batch_json_string(&fields, "root", root);
    batch_json_string(&fields, "options_hash", options_hash);
    batch_json_number(&fields, "shard", args.shard);
    batch_json_number(&fields, "shards", args.shards);
    batch_json_number(&fields, "series", (double)in_share);
    batch_json_number(&fields, "skipped", (double)skipped);
    batch_json_number(&fields, "already_complete", (double)complete);
    batch_json_number(&fields, "to_label", (double)pending_count);
    batch_json_number(&fields, "files_not_dicom", (double)scan.files_not_dicom);
    batch_json_number(&fields, "files_without_image", (double)scan.files_non_image);
    batch_json_number(&fields, "dicomdir_files", (double)scan.files_directory);
    batch_event("start", fields);
    free(fields);
    for (size_t n = 0; n < scan.note_count; n++) {
        fields = NULL;
        batch_json_string(&fields, "note", scan.notes[n]);
        batch_event("file_skipped", fields);
        free(fields);
    }
    if (!args.quiet)
        fprintf(stderr, "voxlabel: %zu series%s: %zu to label, %zu already complete, %zu skipped; %lld file(s) not "
                "DICOM or without an image\n", in_share, args.shards > 1 ? " in this shard" : "", pending_count,
                complete, skipped, (long long)(scan.files_not_dicom + scan.files_non_image));

    /* Series after series allocate buffers of about the same sizes. glibc gives large blocks back to the kernel
     * when freed, so each series would fault in and zero fresh pages again; keeping freed memory in the heap
     * for the next series saves that. The process then holds about its largest series' peak until it ends. */
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
    /* Several jobs share the cores, unless --threads says how many each one takes. */
    const int jobs = pending_count < (size_t)args.jobs ? (pending_count ? (int)pending_count : 1) : args.jobs;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int given = label_arguments_input(label)->threads;
    const int read_threads = given > 0 ? given : (int)(cores > jobs ? cores / jobs : 1);
    if (jobs > 1 && given == 0)
        vl_set_thread_limit(read_threads);
    batch_work work = {
        .out_directory = out,
        .list = &list,
        .pending = pending,
        .pending_count = pending_count,
        .arguments = label,
        .options_hash = options_hash,
        .depth = args.depth,
        .write_depth = args.write_depth,
        .read_threads = read_threads,
        .write_threads = args.write_threads,
        .quiet = args.quiet,
        .worker_name = "",
    };
    cli_gpu_warm_up_finish(&gpu_warm_up);
    const int worst = run_jobs(&work, jobs);

    int failed = 0;
    status = batch_cohort_write(table, out, &list, args.shard, args.shards, options_hash, &failed);
    if (status != VL_OK) {
        result = cli_status_error(status);
        goto done;
    }
    fields = NULL;
    batch_json_number(&fields, "failed", failed);
    batch_json_string(&fields, "table", table);
    batch_event("end", fields);
    free(fields);
    if (!args.quiet)
        printf("%zu series: %zu labelled now, %zu already complete, %zu skipped, %d failed; wrote %s\n", in_share,
               pending_count - (size_t)(failed < (int)pending_count ? failed : (int)pending_count), complete, skipped,
               failed, table);
    result = failed ? (worst > CLI_EXIT_INPUT ? worst : CLI_EXIT_INPUT) : CLI_EXIT_OK;

done:
    cli_gpu_warm_up_finish(&gpu_warm_up);
    batch_events_close();
    free(pending);
    batch_series_list_free(&list);
    vl_dicom_scan_free(&scan);
    free(label);
    return result;
}
