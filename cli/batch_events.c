#define _GNU_SOURCE /* open_memstream, flock */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "batch_events.h"
#include "cli.h"

static int log_fd = -1;

int batch_events_open(const char *path)
{
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0)
        return cli_error(CLI_EXIT_OUTPUT, "%s: cannot open the event log: %s", path, strerror(errno));
    if (flock(log_fd, LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EINTR)) {
        close(log_fd);
        log_fd = -1;
        return cli_error(CLI_EXIT_OUTPUT, "%s: another voxlabel batch is running this cohort (or shard) into the "
                         "same folder; wait for it or choose another -o", path);
    }
    return 0;
}

void batch_event(const char *event, const char *fields)
{
    if (log_fd < 0)
        return;
    char stamp[32];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
    char *line = NULL;
    size_t bytes = 0;
    FILE *out = open_memstream(&line, &bytes);
    if (!out)
        return;
    fprintf(out, "{\"time\": \"%s.%03ldZ\", \"event\": ", stamp, now.tv_nsec / 1000000);
    cli_json_write_string(out, event);
    fprintf(out, "%s}\n", fields ? fields : "");
    if (fclose(out) == 0) {
        ssize_t written = write(log_fd, line, bytes);
        (void)written;
    }
    free(line);
}

void batch_events_close(void)
{
    if (log_fd >= 0)
        close(log_fd);
    log_fd = -1;
}

static void append(char **fields, const char *key, const char *value, double number)
{
    char *text = NULL;
    size_t bytes = 0;
    FILE *out = open_memstream(&text, &bytes);
    if (!out)
        return;
    if (*fields)
        fputs(*fields, out);
    fputs(", ", out);
    cli_json_write_string(out, key);
    fputs(": ", out);
    if (value)
        cli_json_write_string(out, value);
    else if (isfinite(number))
        fprintf(out, "%.6g", number);
    else
        fputs("null", out);
    if (fclose(out) == 0) {
        free(*fields);
        *fields = text;
    } else {
        free(text);
    }
}

void batch_json_string(char **fields, const char *key, const char *value)
{
    append(fields, key, value ? value : "", 0);
}

void batch_json_number(char **fields, const char *key, double value)
{
    append(fields, key, NULL, value);
}
