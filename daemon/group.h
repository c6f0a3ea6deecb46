/*
 * group.h -- groups: names, owners, formation, ranks, leave and failure
 * (docs/collectives.md, "Groups").
 *
 * Three tables live in struct group_state (d->gs):
 *   names   on the owner of a name: size, placement, joiners in arrival
 *           order, and once formed the gid and who has left or died;
 *   joins   on a joiner's daemon: GROUP_JOIN requests of local tasks that
 *           wait for GROUP_FORMED / GROUP_FAILED;
 *   groups  on every daemon with a member: the installed group (ranks,
 *           hosts, the two-level plan) and its collective instances
 *           (daemon/coll.c).
 * The collectives' own state (early messages, schedule cache, counters)
 * is daemon/coll.c's struct coll_state, reached through d->gs->cs.
 * A group is dropped when all its local members have left or died.  A
 * member that leaves after k collectives, dies, or whose host goes down
 * fails every collective of seq >= k (0 for a death) with COLLS_EPEERDEAD
 * or COLLS_EHOSTDOWN, on every daemon holding the group.
 */
#ifndef COLLS_DAEMON_GROUP_H
#define COLLS_DAEMON_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/alg/topo.h"
#include "proto/colls.pb-c.h"
#include "proto/list.h"

struct daemon;
struct task;
struct stats_json;
struct coll_state;

#define GROUP_NAME_MAX 128   /* bytes of a group name, NUL excluded */
#define GROUP_SIZE_MAX 65536 /* members of one group */

/* An installed group (every daemon with a member). */
struct plogp_params;

struct group {
    struct list_node node; /* on d->gs->groups */
    uint64_t gid;
    char name[GROUP_NAME_MAX + 1];
    int P, owner, placement;
    uint32_t *tids;     /* P, rank order */
    int *hids;          /* P: host of each rank */
    struct topo_hier H; /* the two-level plan over hids */
    int myhost;         /* this daemon's host number in H (leader rank) */
    int nlocal;         /* members here */
    int *local;         /* nlocal: their ranks, ascending */
    uint64_t *next_seq; /* nlocal: each local member's next collective */
    uint8_t *gone;      /* P: member left or died */
    int status;         /* 0, or why seq >= fail_from fails */
    uint64_t fail_from;
    int died;       /* a member died or its host went down */
    uint64_t ncoll; /* collectives completed here */
    /* the owner's pLogP parameters when it formed (GroupInfo.params):
       the algorithms are chosen by cost from these; NULL: by the rules */
    struct plogp_params *params;
    struct list_node insts; /* its collective instances (coll.c) */
};

/* On the owner: one name. */
struct group_name {
    struct list_node node; /* on d->gs->names */
    char name[GROUP_NAME_MAX + 1];
    int size, placement;
    int njoin;
    uint32_t *joiners; /* size entries, arrival order */
    uint64_t *req_ids; /* size entries: each joiner's request */
    int formed;
    uint64_t gid;
    uint32_t *tids; /* formed: rank order */
    uint8_t *left;  /* formed: per rank */
};

/* On a joiner's daemon: a join waiting for its answer. */
struct group_join {
    struct list_node node; /* on d->gs->joins */
    uint32_t tid;
    uint64_t req_id;
    int owner; /* the daemon the join was sent to */
    int size, placement;
    uint64_t parked_us; /* redirected to an owner not up here yet: since
                           (0: sent) */
    char name[GROUP_NAME_MAX + 1];
};

/* Counters of group.c (printed with the collective ones, coll.c). */
struct group_counters {
    uint64_t bad_requests, groups_formed, groups_failed;
};

struct group_state {
    struct list_node groups; /* struct group */
    struct list_node names;  /* struct group_name */
    struct list_node joins;  /* struct group_join */
    uint64_t next_gid;
    struct group_counters cnt;
    struct coll_state *cs; /* the collectives' state (daemon/coll.c) */
};

/* Allocates d->gs.  0 or COLLS_ENOMEM. */
int group_init(struct daemon *d);
/* Frees every table (shutdown). */
void group_free_all(struct daemon *d);

/* Task requests GROUP_JOIN and GROUP_LEAVE. */
void group_task_join(struct task *t, const Envelope *e);
void group_task_leave(struct task *t, const Envelope *e);
/* Kinds 300s from daemon hid. */
void group_peer_msg(struct daemon *d, int hid, const Envelope *e);

/* A task (anywhere) exited / a host went down. */
void group_task_exit(struct daemon *d, uint32_t tid);
void group_host_down(struct daemon *d, int hid);
/* Host hid came up (joined, came back): names this daemon collects but
   that hid now owns are handed over (their joiners redirected). */
void group_host_up(struct daemon *d, int hid);
/* Periodic work (from host_cron): parked joins that waited --dead-after
   for their owner to come up fail with COLLS_EAGAIN. */
void group_cron(struct daemon *d, uint64_t now_us);

/* The installed group gid, or NULL. */
struct group *group_find(struct daemon *d, uint64_t gid);
/* Index of rank among g's local members, or -1. */
int group_local_index(const struct group *g, int rank);
/* Rank of tid in g, or -1. */
int group_rank_of(const struct group *g, uint32_t tid);

/* Fills e as a reply of kind to task tid's request req_id on group name,
   with status (the daemon's answers: GROUP_FAILED, COLL_RESULT). */
void group_reply_env(const struct daemon *d, Envelope *e, int kind,
                     uint32_t tid, uint64_t req_id, const char *name,
                     int status);

/* Appends the "groups" array to the stats JSON. */
void group_stats_json(struct daemon *d, struct stats_json *j);

#endif
