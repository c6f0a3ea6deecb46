/*
 * daemon.h -- collsd's core structures, shared by the daemon's own files
 * (never by proto/ or the library).
 *
 * One struct daemon holds the state of the process: the event base, the
 * options, the UDP transport, the host table, the attached tasks, pending
 * requests to other daemons, notifications and counters.  Everything runs
 * on one libevent loop in one thread, so nothing here is locked.
 *
 * Lifetimes: a task is unlinked from every table the moment it dies and
 * parked on the graveyard list; collsd.c's end-of-loop-turn hook (run by
 * net.c after the callbacks of each loop turn) and the cron free the
 * graveyard, so no callback ever frees the object it is running for.  Other
 * objects refer to tasks by tid, never by pointer across callbacks.
 */
#ifndef COLLS_DAEMON_DAEMON_H
#define COLLS_DAEMON_DAEMON_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "colls.h"
#include "daemon/stats.h"
#include "proto/buf.h"
#include "proto/colls.pb-c.h"
#include "proto/dgram.h"
#include "proto/frame.h"
#include "proto/list.h"
#include "proto/siphash.h"

struct event_base;
struct event;
struct evhttp;
struct config;
struct udp;
struct rel;
struct auth;
struct group_state;
struct measure_state;
struct net_ops;
struct route_flow;
struct task_ops;
struct spawn_state;
struct route_exits;

#define DAEMON_MAX_HID      DGRAM_MAX_HID
#define DAEMON_MAX_LOCAL    0xfffffu /* tid local numbers 1..this */
#define DAEMON_NAME_LEN     64
#define DAEMON_ADDR_LEN     64
#define DAEMON_TASK_BUCKETS 1024
#define DAEMON_ARCH_LEN     32

/* ---- hosts -------------------------------------------------------------- */

struct host {
    int hid;
    int state;         /* COLLS_HOST_UP / _DOWN / _JOINING */
    uint32_t inc;      /* incarnation, 0 = not known yet */
    uint32_t dead_inc; /* incarnation declared down (ignored) */
    char name[DAEMON_NAME_LEN];
    char addr[DAEMON_ADDR_LEN]; /* "a.b.c.d:port" */
    struct sockaddr_in sa;
    int ntasks;             /* from its heartbeats */
    uint64_t epoch;         /* its table epoch, from heartbeats */
    uint64_t last_heard_us; /* a message from it was delivered */
    uint64_t since_us;      /* entered the current state */
    uint64_t msgs_in, msgs_out;
    int listed;         /* comes from the hostfile */
    uint64_t notice_us; /* last "you are down" notice to its dead_inc */
    int left;           /* down because it said it leaves: not told so */
    char arch[DAEMON_ARCH_LEN]; /* its uname -m (heartbeats), "" unknown */
    uint32_t beat_ms; /* its heartbeat interval (heartbeats), 0 unknown */
};

/* ---- tasks -------------------------------------------------------------- */

/* One connection's state; transitions only forward. */
enum task_state {
    TASK_ST_HANDSHAKE, /* connected, waiting for ATTACH_REQ */
    TASK_ST_ACTIVE,    /* attached: has a tid, frames are served */
    TASK_ST_CLOSING,   /* refused or broken: flushing output, then close */
    TASK_ST_DEAD,      /* closed; on the graveyard until the loop frees it */
    TASK_STATE_MAX
};

/* One queued output frame: head bytes inline, then an optional body that
   lives in owner (freed when written) or in head too (owner NULL). */
struct task_out {
    struct task_out *next;
    const uint8_t *body;
    size_t body_len;
    void *owner;              /* freed with the entry, or NULL */
    struct task_share *share; /* released with the entry, or NULL */
    size_t head_len;
    size_t sent;     /* bytes of head + body already written */
    int credit_hid;  /* DATA forwarded by this daemon (0: other output) */
    uint64_t credit; /* ... its cost in flow-control credit */
    uint8_t head[];
};

/* Credit a task owes one sending daemon: the cost of the DATA from it
   that was written to the task since the last CREDIT (task.c). */
struct task_credit {
    int hid;
    uint64_t bytes;
};

struct task_stats {
    uint64_t frames_in, frames_out, bytes_in, bytes_out;
    uint64_t msgs_sent, msgs_recv, send_failed, pauses;
};

struct task {
    struct daemon *d;
    struct task *next, *prev; /* d->tasks list */
    struct task *hnext;       /* d->task_hash chain */
    enum task_state state;
    int fd;
    struct event *rev, *wev;
    uint32_t tid;
    pid_t pid;
    uid_t uid;
    int admin;  /* collsctl says it is an admin tool (display only) */
    int rights; /* enum task_right, from the peer credentials */
    char name[DAEMON_NAME_LEN];
    char direct_addr[DAEMON_ADDR_LEN];   /* ROUTE_REG, "" if none */
    uint8_t direct_key[SIPHASH_KEY_LEN]; /* ROUTE_REG: its tickets' key */
    uint32_t parent; /* the task that spawned it (spawn.c), 0 none */
    int catching;    /* CATCHOUT: its children's output is delivered */
    uint64_t attached_us, closing_us;

    /* input: frames are parsed from in; a frame too big for it is read
       straight into big (env + payload), sized after frame_peek. */
    struct buf in;
    uint8_t *big;
    size_t big_len, big_got;
    struct frame_info big_fi;
    int paused;        /* reading stopped (backpressure) */
    uint32_t wait_tid; /* paused on this local task's queue */
    int wait_hid;      /* ... or on this peer's rel queue */
    int wait_credit;   /* ... or on flow-control credit (route.c) */
    unsigned nnotify;  /* its notification requests waiting (route.c) */

    /* output */
    struct task_out *out_head, **out_tail;
    uint64_t out_bytes;   /* queued, not yet written */
    uint64_t notice_next; /* the first broadcast notice it has not got */
    uint64_t peer_bytes;  /* of which DATA from other daemons (frames not
                             wholly written), bounded by --task-credit */
    int wdead;            /* writing failed (peer closed): output is
                             dropped, input is still read to EOF */
    int flush_due;        /* output queued this turn, written at its
                             end (task_flush_due) */

    /* flow control: credit owed to each daemon that forwards to us */
    struct task_credit *credits;
    int ncredits;
    struct shm_chan *shm; /* shared-memory channel (shm.h), or NULL */
    /* single copy (task_cma_*): granted while pidfd, which names the
       process of the peer credentials' pid, is open (-1: not granted);
       its memory may then be read and written at the addresses its
       requests name */
    int pidfd;
    struct task_stats st;
};

/* ---- requests to other daemons, waiting for an answer ------------------ */

enum pending_kind {
    PEND_TASKS, /* TASKS_REQ fan-out: collect TASKS_ANSWERs */
    PEND_ROUTE, /* ROUTE_REQ forwarded to dst's daemon */
    PEND_PING,  /* ECHO_REQ for PING_REQ */
};

struct pending {
    struct list_node node; /* on d->pending, newest first */
    enum pending_kind kind;
    uint64_t id;       /* our req_id on the daemon wire */
    uint32_t task_tid; /* who asked */
    uint64_t task_req; /* the task's req_id */
    uint32_t dst;      /* ROUTE: the tid asked about */
    uint64_t start_us, deadline_us;
    int waiting;                             /* answers still expected */
    unsigned char asked[DAEMON_MAX_HID + 1]; /* PEND_TASKS: hosts asked */
    TaskList list;                           /* PEND_TASKS: collected entries */
};

/* ---- notifications ------------------------------------------------------ */

struct notify {
    struct notify *next;
    uint32_t tid;  /* the task to tell */
    uint32_t what; /* COLLS_NOTIFY_* */
    int32_t who;   /* tid, hid, or -1 any host */
    int32_t tag;
};

/* ---- counters ----------------------------------------------------------- */

struct daemon_stats {
    uint64_t tasks_attached, tasks_exited, attach_refused;
    uint64_t frames_in, frames_out, bytes_in, bytes_out;
    uint64_t bad_frames, bad_envelopes, unknown_kinds, bad_requests;
    uint64_t bad_peer_msgs, bad_join_dgrams;
    uint64_t join_replays; /* sealed join datagrams seen before */
    uint64_t notices_lost; /* notices a task lagged too far to get */
    uint64_t data_local, data_to_peer, data_from_peer, data_echo;
    uint64_t data_held; /* for a spawned copy before it attached */
    uint64_t send_failed, notifies_sent;
    uint64_t peer_msgs_out, peer_msgs_in, peer_send_errors;
    uint64_t heartbeats_out, heartbeats_in, hosts_down, hosts_joined;
    uint64_t requests_timed_out, pauses, resumes;
    uint64_t admin_refused; /* machine verbs refused for lack of rights */
    /* flow control: CREDIT messages sent and received, and DATA held
       for want of credit */
    uint64_t credits_out, credits_in, credit_holds;
    /* spawn.c: copies started, copies refused or failed, output lines
       delivered to a catching task, and lost (it did not read) */
    uint64_t spawned, spawn_refused, spawn_lines, spawn_lines_lost;
    /* adaptive polling (collsd.c): windows opened after a busy turn,
       windows in which input arrived, CPU microseconds spent polling */
    uint64_t poll_rounds, poll_hits, polled_us;
    /* task.c: shared-memory channels taken and refused, bytes through
       the rings, waits on a full ring (ours, the task's), bad indices */
    uint64_t shm_tasks, shm_fallbacks, shm_bytes_in, shm_bytes_out;
    uint64_t shm_full_waits, shm_task_waits, shm_bad;
    /* task.c: tasks with single copy, bytes read from and written to
       their memory, copies that failed (the frame carried the result) */
    uint64_t cma_tasks, cma_bytes_in, cma_bytes_out, cma_failed;
    struct stats_hist msg_bytes;   /* payload sizes of DATA from tasks */
    struct stats_hist ping_rtt_us; /* daemon echo round trips */
};

/* ---- the daemon --------------------------------------------------------- */

struct daemon {
    struct event_base *base;
    struct config *cfg;
    int hid;      /* 0 while joining */
    uint32_t inc; /* this incarnation, never 0 */
    char name[DAEMON_NAME_LEN];
    char listen_addr[DAEMON_ADDR_LEN]; /* bound UDP address */
    char direct_ip[DAEMON_ADDR_LEN];   /* IP tasks bind direct routes to */
    char arch[DAEMON_ARCH_LEN];        /* uname -m */
    uint64_t start_us;
    int stopping; /* shutting down: refuse new work */
    int exit_code;
    uint64_t stop_at_us; /* stop by then even if peers lag */

    /* network (net.c); net_ops are collsd.c's, given to net_open */
    const struct net_ops *net_ops;
    struct udp *udp;
    struct rel *rel;
    struct auth *auth; /* the cluster key; NULL: none (loopback/insecure) */
    struct event *udp_rev, *udp_wev, *rel_ev, *flush_ev;
    uint64_t rel_deadline_us;
    /* the protocol version each host was last logged speaking, when not
       ours (net_deliver: one COLLS_EVERSION line per peer and version) */
    uint32_t peer_version[DAEMON_MAX_HID + 1];

    /* hosts (host.c) */
    struct host *hosts[DAEMON_MAX_HID + 1];
    int hid_top; /* no entry above it: host_get raises it, never lowered */
    uint64_t epoch;
    int joining; /* --join: waiting for a hid */
    uint64_t join_start_us, join_last_us;
    struct sockaddr_in join_sa;
    uint64_t last_heartbeat_us;
    uint64_t beat_us; /* the interval our last heartbeat announced */
    int beat_soon;    /* a host came up: heartbeat at the next cron */
    int host_down_by; /* a host declared us down: come back (host_comeback) */

    /* tasks (task.c); task_ops are collsd.c's, set before access_listen */
    const struct task_ops *task_ops;
    int listen_fd;
    struct event *accept_ev;
    char *sock_path, *pid_path;
    struct task *tasks; /* live tasks (any state but DEAD) */
    struct task *task_hash[DAEMON_TASK_BUCKETS]; /* ACTIVE, by tid */
    struct task *graveyard;                      /* DEAD, freed from the loop */
    uint32_t next_local; /* next tid local number; never reused */
    int ntasks;          /* ACTIVE tasks */
    int npaused;         /* tasks with reading paused */
    int nflush_due;      /* tasks whose output waits for the turn's end */
    int shm_awake;       /* some channel's req_awake is set (task.c) */
    /* broadcast notices (TASK_EXIT, HOST_DOWN) kept for tasks over their
       queue limit (task.c, task_notice_all): a ring of TASK_NOTICES */
    struct task_notice *notices;
    uint64_t notice_head; /* notices broadcast so far */

    /* requests (admin.c, route.c) */
    struct list_node pending; /* struct pending (admin.c) */
    uint64_t next_req;
    struct notify *notifies;
    struct route_flow *flow;   /* flow-control state of senders (route.c) */
    struct route_exits *exits; /* recent exit statuses (route.c) */

    /* spawned children and spawn requests (spawn.c) */
    struct spawn_state *spawn;

    /* groups and collectives (group.c, coll.c) */
    struct group_state *gs;
    /* pLogP parameters and their measurement (measure.c) */
    struct measure_state *ms;

    struct evhttp *http;
    struct event *cron_ev;
    uint64_t cron_us;     /* the previous cron (stall detection, host_cron) */
    uint64_t cron_gap_us; /* the period the cron was armed at */
    uint64_t cron_due_us; /* the earliest it was armed for since it ran
                             (host_cron's stalls) */
    int cron_idle;        /* armed at the idle period (collsd_cron_arm) */
    struct daemon_stats st;
};

/* tid helpers */
static inline int
daemon_tid_is_daemon(uint32_t tid)
{
    return COLLS_TID_LOCAL(tid) == 0;
}

#endif
