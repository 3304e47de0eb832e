/* voxlabel batch's event log, OUT/cohort.jsonl (cohort-shard-I-of-N.jsonl for a shard): one JSON object per
 * line, appended with one write each, so worker processes of one run interleave whole lines. It holds times
 * (UTC) and durations and is not among the reproducible outputs. The log is also the run's lock: a second
 * batch of the same shard into OUT is refused while the first holds it. */
#ifndef VL_BATCH_EVENTS_H
#define VL_BATCH_EVENTS_H

/* Opens (creating) and locks the log; returns 0 or the exit code after printing the error. */
int batch_events_open(const char *path);
/* Appends {"time": "...", "event": EVENT, <fields>}; `fields` is the rest of the object, already JSON
 * (", \"key\": value ..." pieces), built with batch_json_* below. Failures to log are ignored. */
void batch_event(const char *event, const char *fields);
void batch_events_close(void);

/* Appends `, "key": "value"` (JSON-escaped) or `, "key": number` to a growing string. */
void batch_json_string(char **fields, const char *key, const char *value);
void batch_json_number(char **fields, const char *key, double value);

#endif
