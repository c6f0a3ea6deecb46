/*
 * measure.h -- the daemon's pLogP parameters: measuring its peers with
 * the core of daemon/plogp.h over its own transport, the machine's
 * summary in force, its file, and collsctl tune's requests
 * (docs/collectives.md "Measuring the network").
 *
 *   on start   the file (--params-file) is read: its parameters are in
 *              force until a new summary replaces them;
 *   host up    with --measure (default on), a quick job measures the new
 *              peer; when it ends the peers measured with the same ladder
 *              are summarised into a new epoch, in force and saved;
 *   moved      the cron re-measures a peer whose least round trip in the
 *              transport moved by more than half (and 1 ms) at three quiet
 * checks; PARAMS_REQ get (the summary and every peer's row), measure one peer
 *              (the thorough ladder unless told; collsctl tune asks peer
 *              by peer, for its progress bar), commit (summarise, with
 *              the task hop collsctl measured).
 * A daemon that makes a summary sends it to every peer (PARAMS_SHARE),
 * and to each peer that comes up; a daemon takes a summary whose (epoch,
 * maker's hid) is greater than its own, so all end with the same one.
 * Groups carry the owner's summary (GroupInfo.params; group.c), so every
 * member daemon of a group chooses alike even while a new one spreads.  One job
 * runs at a time; the others wait in order.
 */
#ifndef COLLS_DAEMON_MEASURE_H
#define COLLS_DAEMON_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/plogp.h"
#include "proto/colls.pb-c.h"

struct daemon;
struct task;

/* Allocates d->ms and reads the parameter file.  0 or COLLS_ENOMEM (a
   bad file is logged and ignored). */
int measure_new(struct daemon *d);
void measure_free(struct daemon *d);

/* The summary in force, or NULL before any. */
const struct plogp_params *measure_current(const struct daemon *d);

/* PARAMS_REQ from task t. */
void measure_task_request(struct task *t, const Envelope *e);
/* PROBE_* and PARAMS_SHARE from daemon hid. */
void measure_peer_msg(struct daemon *d, int hid, const Envelope *e,
                      const uint8_t *payload, size_t plen);
void measure_host_up(struct daemon *d, int hid);
void measure_host_down(struct daemon *d, int hid);
/* Timeouts, re-measuring, starting waiting jobs. */
void measure_cron(struct daemon *d, uint64_t now_us);
/* 1 while a job runs or waits (the idle cron must not sleep long). */
int measure_busy(const struct daemon *d);
/* Measurements of peers running or waiting, and a round under load
   running (the `measure_jobs` statistic). */
unsigned measure_jobs(const struct daemon *d);

/* Parameters to and from the wire.  measure_wire fills w (with arrays
   in store, which must outlive w); measure_unwire checks what it takes
   (plogp_check) and returns 0 or COLLS_EINVAL. */
struct measure_wire_store {
    uint64_t m[PLOGP_MAX_SIZES];
};
void measure_wire(const struct plogp_params *p, Plogp *w,
                  struct measure_wire_store *store);
int measure_unwire(const Plogp *w, struct plogp_params *p);

#endif
