/*
 * colls.h -- the public interface of libcolls, the client library of collsd.
 *
 * A program attaches to the collsd daemon on its host, gets a task id, and
 * exchanges messages with other tasks of the virtual machine.  Every call
 * returns 0 (or a documented non-negative value) on success and a negative
 * COLLS_E* code on failure; none of them aborts the process.  The caller owns
 * what it allocates; a buffer handed to a non-blocking call stays the
 * caller's responsibility until that call completes.
 *
 * This header is self-contained and is also the single source of the
 * constants (datatypes, operators, encodings, error codes) that travel on the
 * wire, so the daemon and the tools include it too.
 */
#ifndef COLLS_H
#define COLLS_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(COLLS_BUILDING_LIBRARY)
#define COLLS_EXTERN __attribute__((visibility("default")))
#else
#define COLLS_EXTERN
#endif

#define COLLS_VERSION_MAJOR 0
#define COLLS_VERSION_MINOR 1

/*
 * Error codes.  One table generates the enum, colls_strerror() and
 * colls_err_name().  Where an errno value fits it is reused (negated); the
 * others live above 4000.  The same numbers travel on the wire.
 */
#define COLLS_ERRNO_MAP(XX)                                                    \
    XX(EINVAL, -EINVAL, "invalid argument")                                    \
    XX(ENOMEM, -ENOMEM, "out of memory")                                       \
    XX(EAGAIN, -EAGAIN, "resource temporarily unavailable")                    \
    XX(ETIMEDOUT, -ETIMEDOUT, "timed out")                                     \
    XX(EPROTO, -EPROTO, "protocol error: malformed input")                     \
    XX(EMSGSIZE, -EMSGSIZE, "message too long")                                \
    XX(ENOENT, -ENOENT, "no such task, host or group")                         \
    XX(EPERM, -EPERM, "operation not permitted")                               \
    XX(ECONNREFUSED, -ECONNREFUSED, "cannot reach the daemon")                 \
    XX(ENOTSUP, -ENOTSUP, "operation not supported")                           \
    XX(EEXIST, -EEXIST, "already exists")                                      \
    XX(ECANCELED, -ECANCELED, "operation canceled")                            \
    XX(EIO, -EIO, "i/o error")                                                 \
    XX(EHOSTDOWN, -EHOSTDOWN, "host is down")                                  \
    XX(ENOBUFS, -ENOBUFS, "no buffer space (buffer too small or queue full)")  \
    XX(EBADMSG, -EBADMSG, "corrupt data")                                      \
    XX(ESHUTDOWN, -ESHUTDOWN, "daemon is shutting down")                       \
    XX(ENOTCONN, -ENOTCONN, "not attached")                                    \
    XX(ETRUNC, -4001, "message truncated: receive buffer too small")           \
    XX(EPEERDEAD, -4002, "peer task died")                                     \
    XX(EVERSION, -4003, "protocol version mismatch")                           \
    XX(EDTYPE, -4004, "invalid datatype")                                      \
    XX(EOP, -4005, "invalid reduction operator for this datatype")             \
    XX(EENCODING, -4006, "invalid encoding")                                   \
    XX(ECONNLOST, -4007, "connection to the daemon lost (daemon died?)")       \
    XX(ETOOMANY, -4008, "daemon at its limit of tasks or connections")         \
    XX(EOWNER, -4009,                                                          \
       "the daemon's socket belongs to another user (not root, not you, "      \
       "not $COLLS_DAEMON_UID)")                                               \
    XX(ECOUNT, -4010, "count mismatch between ranks")                          \
    XX(ESIZE, -4011, "group size mismatch between joiners")                    \
    XX(EFULL, -4012, "group is full")                                          \
    XX(EMEMBER, -4013, "already a member of this group")

typedef enum {
#define COLLS__ERR_ENUM(name, value, text) COLLS_##name = (value),
    COLLS_ERRNO_MAP(COLLS__ERR_ENUM)
#undef COLLS__ERR_ENUM
        COLLS_ERRNO_LAST = -4999
} colls_errno_t;

/* Datatypes.  Values travel on the wire: append only. */
enum {
    COLLS_BYTE = 0,
    COLLS_INT8,
    COLLS_INT16,
    COLLS_INT32,
    COLLS_INT64,
    COLLS_UINT8,
    COLLS_UINT16,
    COLLS_UINT32,
    COLLS_UINT64,
    COLLS_FLOAT,
    COLLS_DOUBLE,
    COLLS_DTYPE_MAX
};

/* Reduction operators.  Values travel on the wire: append only. */
enum {
    COLLS_SUM = 0,
    COLLS_PROD,
    COLLS_MIN,
    COLLS_MAX,
    COLLS_LAND,
    COLLS_LOR,
    COLLS_LXOR,
    COLLS_BAND,
    COLLS_BOR,
    COLLS_BXOR,
    COLLS_OP_MAX
};

/*
 * Encodings (PVM's three).
 *   DEFAULT  XDR (RFC 4506), big-endian, portable anywhere.
 *   RAW      native bytes; the sender's byte order travels in the envelope
 *            and the receiver converts only if its own order differs.
 *   INPLACE  as RAW on the wire, but colls_pack() records a reference to the
 *            caller's memory instead of copying it: the data must stay
 *            valid and unchanged until colls_msg_send() returns.
 */
enum { COLLS_ENC_DEFAULT = 0, COLLS_ENC_RAW = 1, COLLS_ENC_INPLACE = 2 };

/* Byte orders as recorded in envelopes. */
enum { COLLS_ORDER_LITTLE = 0, COLLS_ORDER_BIG = 1 };

/* Routes. DEFAULT: through the daemons.  DIRECT: task-to-task TCP. */
enum { COLLS_ROUTE_DEFAULT = 0, COLLS_ROUTE_DIRECT = 1 };

/* Wildcard for source or tag in receive and probe. */
#define COLLS_ANY (-1)

/* Notification kinds for colls_notify(). */
enum {
    COLLS_NOTIFY_TASK_EXIT = 1,
    COLLS_NOTIFY_HOST_DOWN = 2,
    COLLS_NOTIFY_HOST_ADD = 3
};

typedef struct colls colls_t;             /* one attached task */
typedef struct colls_group colls_group_t; /* a formed group */
typedef struct colls_msg colls_msg_t;     /* a packed message buffer */
typedef struct colls_req colls_req_t;     /* one non-blocking operation */
typedef uint32_t colls_tid_t;

typedef struct {
    colls_tid_t source;
    int tag;
    size_t length;
} colls_status_t;

/* Task ids: hid << 20 | local number.  Local number 0 is the daemon. */
#define COLLS_TID_HID(tid)    ((int)((uint32_t)(tid) >> 20))
#define COLLS_TID_LOCAL(tid)  ((uint32_t)(tid)&0xfffffu)
#define COLLS_DAEMON_TID(hid) ((colls_tid_t)((uint32_t)(hid) << 20))

/* ---- attach ----------------------------------------------------------- */

/*
 * socket_path NULL: $COLLS_SOCKET, else the default path.  If SIGPIPE is
 * at its default action it is set to be ignored: a closed connection is
 * reported as an error, it does not end the process.
 *
 * Before anything is sent, the library checks whom it talks to: the
 * process at the other end of the socket (its peer credentials), the
 * socket file and its directory must all belong to root, to the calling
 * user, or to the uid in $COLLS_DAEMON_UID (a daemon of another user that
 * let this one in with --allow-uid/--allow-gid).  Anything else is
 * COLLS_EOWNER: a socket planted at the expected path by a third user
 * never sees a byte.  COLLS_ETOOMANY: the daemon is at its --max-tasks
 * (or at its connection cap, --max-tasks + 16).
 */
COLLS_EXTERN int colls_attach(const char *socket_path, colls_t **out);
COLLS_EXTERN int colls_detach(colls_t *c);
/*
 * The daemon's own words for the last request it refused on c, or for
 * why it closed the connection (e.g. "admin verbs need uid 1000 or
 * --admin-uid/--admin-gid" with COLLS_EPERM); "" if it gave none.  Failed
 * group joins and collectives leave theirs here too (COLLS_ECOUNT: "64
 * bytes from rank 1, 32 expected"; COLLS_EFULL: "group g is full: ...").
 * Valid until the next call on c.  With c NULL: the words that came with this
 * thread's last failed colls_attach (e.g. "too many connections to the
 * daemon (limit 18: --max-tasks 2 + 16)"), "" if none.
 */
COLLS_EXTERN const char *colls_errmsg(const colls_t *c);
COLLS_EXTERN colls_tid_t colls_mytid(const colls_t *c);
COLLS_EXTERN const char *colls_strerror(int err);
COLLS_EXTERN const char *colls_err_name(int err);
/* Route used by later sends of this task (COLLS_ROUTE_*). */
COLLS_EXTERN int colls_set_route(colls_t *c, int route);
/* Timeout in milliseconds for blocking calls; -1 (default) waits forever.
   A call that times out returns COLLS_ETIMEDOUT.  Sends are not cut
   short: they return once their bytes are written to the connection. */
COLLS_EXTERN int colls_set_timeout(colls_t *c, int ms);
/* Messages sent with COLLS_ROUTE_DIRECT that went through the daemon
   because the peer could not be reached directly. */
COLLS_EXTERN uint64_t colls_route_fallbacks(const colls_t *c);

/* ---- point to point --------------------------------------------------- */

/* Sends len raw bytes.  A message to COLLS_DAEMON_TID(hid) is echoed back
   by that daemon with the same tag (diagnostics).  Any int is a tag but
   INT_MIN, which the library keeps for itself (COLLS_EINVAL); no receive
   with COLLS_ANY as tag sees the library's messages. */
COLLS_EXTERN int colls_send(colls_t *c, colls_tid_t dst, int tag,
                            const void *buf, size_t len);
/* As colls_send, with the route chosen for this message only. */
COLLS_EXTERN int colls_send_route(colls_t *c, colls_tid_t dst, int tag,
                                  const void *buf, size_t len, int route);
/* Blocks until a message matching src/tag (COLLS_ANY wildcards) arrives.
   A message longer than cap is consumed, cap bytes are stored, and
   COLLS_ETRUNC is returned with st->length the full length. */
COLLS_EXTERN int colls_recv(colls_t *c, colls_tid_t src, int tag, void *buf,
                            size_t cap, colls_status_t *st);
/* Non-blocking receive: COLLS_EAGAIN when nothing matches yet. */
COLLS_EXTERN int colls_nrecv(colls_t *c, colls_tid_t src, int tag, void *buf,
                             size_t cap, colls_status_t *st);
/* Returns 1 and fills st if a matching message is queued, 0 if not.
   With block != 0 waits for one (subject to the timeout). */
COLLS_EXTERN int colls_probe(colls_t *c, colls_tid_t src, int tag, int block,
                             colls_status_t *st);

/* Non-blocking send and receive, completed by colls_wait/colls_test. */
COLLS_EXTERN int colls_isend(colls_t *c, colls_tid_t dst, int tag,
                             const void *buf, size_t len, colls_req_t **req);
COLLS_EXTERN int colls_irecv(colls_t *c, colls_tid_t src, int tag, void *buf,
                             size_t cap, colls_req_t **req);
/* Waits for req, fills st (may be NULL), frees req, returns its result. */
COLLS_EXTERN int colls_wait(colls_req_t *req, colls_status_t *st);
/* Sets *done; when done, as colls_wait. */
COLLS_EXTERN int colls_test(colls_req_t *req, int *done, colls_status_t *st);

/* ---- packed messages -------------------------------------------------- */

/* NULL on bad encoding or out of memory. */
COLLS_EXTERN colls_msg_t *colls_msg_new(int encoding);
COLLS_EXTERN int colls_pack(colls_msg_t *m, int dtype, const void *data,
                            size_t count);
/* Unpacks count items of dtype, in the order they were packed (COLLS_BYTE
   in XDR: with the same counts as packed).  Past the end of the message:
   COLLS_ETRUNC, nothing consumed; XDR data invalid for dtype: EPROTO. */
COLLS_EXTERN int colls_unpack(colls_msg_t *m, int dtype, void *data,
                              size_t count);
COLLS_EXTERN int colls_msg_set_route(colls_msg_t *m, int route);
COLLS_EXTERN int colls_msg_send(colls_t *c, colls_tid_t dst, int tag,
                                colls_msg_t *m);
/* The message remembers the route it came by: colls_msg_send() of it
   answers on that route, with the same bytes and encoding. */
COLLS_EXTERN int colls_msg_recv(colls_t *c, colls_tid_t src, int tag,
                                colls_msg_t **out);
/* Source, tag and packed length of a received message. */
COLLS_EXTERN int colls_msg_info(const colls_msg_t *m, colls_status_t *st);
COLLS_EXTERN void colls_msg_free(colls_msg_t *m);

/* ---- notifications ---------------------------------------------------- */

/*
 * Asks the daemon to send this task a message with the given tag when
 * something happens: what = COLLS_NOTIFY_TASK_EXIT with who = a tid, or
 * COLLS_NOTIFY_HOST_DOWN with who = a host id (COLLS_ANY: any host).  The
 * message comes from the local daemon's tid and holds big-endian u32s:
 * what, who, and for TASK_EXIT a third, the task's exit status as a shell
 * shows it (its exit code, or 128 + the signal), 0xffffffff when unknown
 * (a task not spawned by a daemon, or one that detached and lived on).
 * COLLS_NOTIFY_HOST_ADD (who ignored): a message when any host joins.
 */
COLLS_EXTERN int colls_notify(colls_t *c, int what, int who, int tag);

/* ---- spawn ------------------------------------------------------------ */

/* Where colls_spawn() starts its copies (flags). */
enum {
    COLLS_SPAWN_ANY = 0,  /* where ignored: hosts with the fewest tasks */
    COLLS_SPAWN_HOST = 1, /* where: host name, address[:port] or hid */
    COLLS_SPAWN_ARCH = 2  /* where: an architecture, as uname -m prints it */
};

/*
 * Starts n copies of the program file with arguments argv (NULL-terminated,
 * argv[0] not included; NULL: none) through the daemons, placed as flags
 * and where say.  Each copy runs as its daemon's user, attached at start,
 * with colls_parent() = the caller.  tids (n entries) receives each copy's
 * tid, or a negative COLLS_E* code for a copy that did not start:
 * COLLS_ENOENT no such file (or not executable), COLLS_EPERM outside the
 * daemon's --spawn-path, COLLS_EHOSTDOWN no such host (or architecture)
 * up, COLLS_ETOOMANY the daemon's task limit.  Returns the number of
 * copies started, or a negative code when the request as a whole failed.
 */
COLLS_EXTERN int colls_spawn(colls_t *c, const char *file, char *const argv[],
                             int flags, const char *where, int n,
                             colls_tid_t *tids);
/*
 * The copies' environment is their daemon's, plus the caller's COLLS_*
 * variables (settings every member of a group must share, such as
 * COLLS_DIRECT_MAX and COLLS_ALG_<OP>, then are; not COLLS_SOCKET,
 * COLLS_SPAWN_COUNT, COLLS_SPAWN_INDEX, COLLS_TASK_NAME, which the daemon
 * sets), plus the variables the caller's COLLS_EXPORT names
 * (':'-separated, as PVM's PVM_EXPORT).  colls_spawn_env adds env
 * ("NAME=value" strings, NULL-terminated; NULL: none) after those.  A
 * caller of another uid than the daemon's (not root) may pass only
 * COLLS_* and PVM_* variables, else the request fails with COLLS_EPERM;
 * an entry that is not NAME=value fails it with COLLS_EINVAL.
 */
COLLS_EXTERN int colls_spawn_env(colls_t *c, const char *file,
                                 char *const argv[], char *const env[],
                                 int flags, const char *where, int n,
                                 colls_tid_t *tids);
/* The tid of the task that spawned this one, or COLLS_ENOENT. */
COLLS_EXTERN int colls_parent(colls_t *c, colls_tid_t *parent);
/*
 * The copies started by the same colls_spawn() as this task, this one
 * included, in the spawn's index order (copies that did not start are
 * not listed): writes up to max of their tids into tids and returns how
 * many there are.  A task that was not spawned, or was spawned alone, is
 * its own only sibling.  The spawner sends the list as its colls_spawn()
 * returns, so a copy may wait for it that long; COLLS_EPEERDEAD if the
 * spawner ended without sending it, COLLS_ETIMEDOUT after
 * colls_set_timeout().  Each copy may call it or not, any number of times.
 */
COLLS_EXTERN int colls_siblings(colls_t *c, colls_tid_t *tids, int max);
/*
 * From now on, the stdout and stderr lines of the tasks this one spawns
 * (and of their children) are written to fd as they arrive, each line
 * prefixed "[t%x] " with the child's tid; fd -1: no longer.  Without it
 * they go to the spawner's daemon's log only.
 */
COLLS_EXTERN int colls_catchout(colls_t *c, int fd);
/* Ends task tid (SIGTERM from its daemon): only a task of the same user,
   or any task for root. */
COLLS_EXTERN int colls_kill(colls_t *c, colls_tid_t tid);

/* ---- the machine (collsctl) ------------------------------------------- */

enum { COLLS_HOST_UP = 0, COLLS_HOST_DOWN = 1, COLLS_HOST_JOINING = 2 };

typedef struct {
    int hid;
    int state; /* COLLS_HOST_* */
    uint32_t incarnation;
    char name[64]; /* host name reported by that daemon */
    char addr[64]; /* address:port of its UDP transport */
    int ntasks;
    double rtt_us; /* smoothed RTT from this daemon, 0 for self */
    char arch[32]; /* that daemon's architecture, as uname -m prints it */
} colls_hostinfo_t;

typedef struct {
    colls_tid_t tid;
    int pid;
    int uid;
    char name[64];      /* program name */
    colls_tid_t parent; /* the task that spawned it; 0: none */
    char channel[8];    /* "shm" or "socket": what carries its frames to its
                           daemon ("" from a daemon that does not say) */
} colls_taskinfo_t;

/* Arrays are allocated by the library; release them with colls_free(). */
COLLS_EXTERN int colls_hosts(colls_t *c, colls_hostinfo_t **out, int *n);
/* Tasks of host hid (0: the local host; COLLS_ANY: all hosts). */
COLLS_EXTERN int colls_tasks(colls_t *c, int hid, colls_taskinfo_t **out,
                             int *n);
/* The daemon's statistics as a JSON document (NUL-terminated). */
COLLS_EXTERN int colls_stats_json(colls_t *c, char **out);
/* Daemon-to-daemon echo of len bytes from the local daemon to host hid;
 *rtt_us is the measured round trip. */
COLLS_EXTERN int colls_ping(colls_t *c, int hid, size_t len, double *rtt_us);

/*
 * pLogP parameters (docs/collectives.md "Measuring the network"): the
 * machine's summary the daemon chooses algorithms from (hid 0), or one
 * peer's row (hid).  Per size m[i]: g[i] the cost of an isolated message
 * beyond L, gap[i] the gap of back-to-back messages, rtt[i] the echo
 * round trip; times in microseconds, gamma in us per byte reduced, the
 * task's hop to its daemon hop_us + hop_byte_us * bytes each way.
 */
#define COLLS_PLOGP_MAX 16
typedef struct {
    int hid;
    uint64_t epoch; /* the summary's; 0: nothing measured yet */
    double L, gamma, hop_us, hop_byte_us;
    double Ll; /* L while every daemon echoes at once */
    int n;
    size_t m[COLLS_PLOGP_MAX];
    double g[COLLS_PLOGP_MAX], gap[COLLS_PLOGP_MAX], rtt[COLLS_PLOGP_MAX];
    double gl[COLLS_PLOGP_MAX]; /* g while every daemon sends at once */
    /* the send and receive overheads: the sending and the receiving
       daemon's CPU time per message (0: not measured) */
    double o_s[COLLS_PLOGP_MAX], o_r[COLLS_PLOGP_MAX];
} colls_plogp_t;

/* The summary in force (epoch 0 and n 0 before any) and, when peers is
   not NULL, every peer's last row (*npeers of them; colls_free). */
COLLS_EXTERN int colls_plogp_get(colls_t *c, colls_plogp_t *machine,
                                 colls_plogp_t **peers, int *npeers);
/* Has the local daemon measure peer hid at nsizes increasing sizes (0:
   its thorough ladder, 1 B .. 4 MiB), reps times each (0: 3); its row in
   *row.  Needs admin rights (COLLS_EPERM). */
COLLS_EXTERN int colls_plogp_measure(colls_t *c, int hid, const size_t *sizes,
                                     int nsizes, int reps, colls_plogp_t *row);
/* Has the local daemon run rounds in which every daemon up sends a train
   to the next at once, at nsizes increasing sizes, reps times each (0: 3);
   *row gets the median gap per size (m, gap).  The next commit costs
   rings and butterflies with it (gl).  Admin rights. */
COLLS_EXTERN int colls_plogp_load(colls_t *c, const size_t *sizes, int nsizes,
                                  int reps, colls_plogp_t *row);
/* Has the daemon summarise its newest rows into a new epoch, in force and
   saved, with the task hop given; *machine gets it.  Admin rights. */
COLLS_EXTERN int colls_plogp_commit(colls_t *c, double hop_us,
                                    double hop_byte_us, colls_plogp_t *machine);
COLLS_EXTERN int colls_add_host(colls_t *c, const char *hostport);
COLLS_EXTERN int colls_delete_host(colls_t *c, int hid);
COLLS_EXTERN int colls_halt(colls_t *c);
COLLS_EXTERN void colls_free(void *p);

/* ---- groups ----------------------------------------------------------- */

/* Rank placement at formation: contiguous per host (host 1's members, then
   host 2's, ..., join order within a host) or round-robin over hosts. */
enum { COLLS_PLACE_CONTIGUOUS = 0, COLLS_PLACE_ROUNDROBIN = 1 };

/*
 * Joins the group called name; blocks until size tasks have joined, then
 * returns this task's rank (>= 0) and *out.  Every joiner must give the
 * same size: a joiner giving another size fails, and so does every one
 * waiting, with COLLS_ESIZE.  A task that is not a member joining a formed
 * group gets COLLS_EFULL; a member, or a task whose join is still pending
 * (one cut short by the timeout), COLLS_EMEMBER.  colls_errmsg(c) then has
 * the daemon's words (e.g. "group g: size 3 asked by t200003, 2 by
 * t100005 (1 of 2 joined); every joiner refused").  A COLLS_ALG_* variable
 * that names no operation (COLLS_ALG_ALLREDCE) fails the join with
 * COLLS_EINVAL, the valid names in colls_errmsg(c).
 */
COLLS_EXTERN int colls_group_join(colls_t *c, const char *name, int size,
                                  colls_group_t **out);
/* As colls_group_join, with a COLLS_PLACE_* placement (the first joiner's
   placement counts; a different one later is COLLS_EINVAL). */
COLLS_EXTERN int colls_group_join_placed(colls_t *c, const char *name, int size,
                                         int placement, colls_group_t **out);
COLLS_EXTERN int colls_group_rank(const colls_group_t *g);
COLLS_EXTERN int colls_group_size(const colls_group_t *g);
/* Task id of rank r, or 0 when r is out of range. */
COLLS_EXTERN colls_tid_t colls_group_tid(const colls_group_t *g, int r);
/* Leaves and frees g.  The name is free again once every member left. */
COLLS_EXTERN int colls_group_leave(colls_group_t *g);

/* How a collective runs: AUTO (hierarchical where it applies; barrier,
   bcast, allreduce and allgather run direct: with several members on a
   host through shared memory among the members of a host (COLLS_BOARD),
   in chunks of $COLLS_DIRECT_MAX bytes (default 65536) at any size (an
   allgather larger than that as one bcast per member)), HIER (per-host
   subspaces + leaders), FLAT (same algorithms over task ranks), DIRECT
   (barrier, bcast, allreduce and allgather among the tasks over the
   direct route, at any size, without the daemons' algorithms; the other
   operations as AUTO).  docs/collectives.md, "Direct collectives". */
enum {
    COLLS_MODE_AUTO = 0,
    COLLS_MODE_HIER = 1,
    COLLS_MODE_FLAT = 2,
    COLLS_MODE_DIRECT = 3
};
COLLS_EXTERN int colls_group_set_mode(colls_group_t *g, int mode);

/* Collective operations (for options, statistics and traces). */
enum {
    COLLS_COLL_BARRIER = 0,
    COLLS_COLL_BCAST,
    COLLS_COLL_REDUCE,
    COLLS_COLL_ALLREDUCE,
    COLLS_COLL_GATHER,
    COLLS_COLL_GATHERV,
    COLLS_COLL_SCATTER,
    COLLS_COLL_SCATTERV,
    COLLS_COLL_ALLGATHER,
    COLLS_COLL_ALLGATHERV,
    COLLS_COLL_ALLTOALL,
    COLLS_COLL_ALLTOALLV,
    COLLS_COLL_REDUCE_SCATTER,
    COLLS_COLL_SCAN,
    COLLS_COLL_EXSCAN,
    COLLS_COLL_MAX
};

/*
 * Forces the algorithm of operation op (COLLS_COLL_*) on this group:
 * spec "name" or "name:segment_bytes" (see `collsctl algorithms`); NULL
 * clears.  The environment variable COLLS_ALG_<OP> (e.g. COLLS_ALG_BCAST=
 * chain_seg:65536) does the same for every group of the process.  A name
 * the operation has no algorithm of fails its collectives with
 * COLLS_EINVAL and, in colls_errmsg, the names there are
 * ("COLLS_ALG_ALLREDUCE=nosuch: unknown algorithm \"nosuch\" for
 * allreduce (one of: butterfly, ...)").  When a known algorithm cannot
 * run (e.g. it needs a power of two), the daemon runs its default choice,
 * logs and counts the fallback.
 */
COLLS_EXTERN int colls_group_set_alg(colls_group_t *g, int op,
                                     const char *spec);

/* FPC compression of double data in bcast: off, on, or auto. */
enum { COLLS_COMPRESS_OFF = 0, COLLS_COMPRESS_ON = 1, COLLS_COMPRESS_AUTO = 2 };
COLLS_EXTERN int colls_group_set_compress(colls_group_t *g, int mode);

/* Algorithm and mode the group's last collective ran with ("" before). */
COLLS_EXTERN const char *colls_group_last_alg(const colls_group_t *g);
COLLS_EXTERN int colls_group_last_mode(const colls_group_t *g);

/* ---- collectives -------------------------------------------------------
 * Counts are items of dtype; every member passes the same count, dtype,
 * op and root: counts that differ fail the call at every member with
 * COLLS_ECOUNT, any other difference with COLLS_EINVAL, the difference
 * in colls_errmsg ("count 8 at rank 1, 16 at rank 0").  A member task that dies
 * or a host that goes down makes every other member's call return
 * COLLS_EPEERDEAD / COLLS_EHOSTDOWN; the group is unusable afterwards.  With
 * COLLS_TRACE=1 in the environment each collective writes one line to stderr:
 * group, operation, bytes, P, algorithm, microseconds.
 * Completion as in MPI: a call returns once its buffers may be reused.
 * The root of bcast, scatter and scatterv and a non-root of reduce, gather
 * and gatherv return as soon as their request is handed to the daemon;
 * a failure of such an operation is returned by a later call on the group
 * (at the latest by the next one that waits for its own result; its output
 * is valid then).  Leaving the group and detaching wait for them all
 * (docs/collectives.md, "Completion").
 */
COLLS_EXTERN int colls_barrier(colls_group_t *g);
COLLS_EXTERN int colls_bcast(colls_group_t *g, void *buf, size_t count,
                             int dtype, int root);
COLLS_EXTERN int colls_reduce(colls_group_t *g, const void *sbuf, void *rbuf,
                              size_t count, int dtype, int op, int root);
COLLS_EXTERN int colls_allreduce(colls_group_t *g, const void *sbuf, void *rbuf,
                                 size_t count, int dtype, int op);
/* count per rank; rbuf (root only) holds size * count items. */
COLLS_EXTERN int colls_gather(colls_group_t *g, const void *sbuf, void *rbuf,
                              size_t count, int dtype, int root);
COLLS_EXTERN int colls_scatter(colls_group_t *g, const void *sbuf, void *rbuf,
                               size_t count, int dtype, int root);
COLLS_EXTERN int colls_allgather(colls_group_t *g, const void *sbuf, void *rbuf,
                                 size_t count, int dtype);
/* sbuf: size blocks of count items, block j for rank j. */
COLLS_EXTERN int colls_alltoall(colls_group_t *g, const void *sbuf, void *rbuf,
                                size_t count, int dtype);
/* sbuf: size * count items; rbuf: count items, block rank reduced. */
COLLS_EXTERN int colls_reduce_scatter(colls_group_t *g, const void *sbuf,
                                      void *rbuf, size_t count, int dtype,
                                      int op);
COLLS_EXTERN int colls_scan(colls_group_t *g, const void *sbuf, void *rbuf,
                            size_t count, int dtype, int op);
/* Rank 0's rbuf is left untouched. */
COLLS_EXTERN int colls_exscan(colls_group_t *g, const void *sbuf, void *rbuf,
                              size_t count, int dtype, int op);
/* v-variants, MPI style: counts and displacements in items, one per rank.
   Unlike MPI, every member passes the counts (gatherv: rcounts, scatterv:
   scounts; the same everywhere: the daemons plan with them); displacements
   are significant where blocks are received or sent (gatherv / scatterv:
   at the root). */
COLLS_EXTERN int colls_gatherv(colls_group_t *g, const void *sbuf,
                               size_t scount, void *rbuf, const size_t *rcounts,
                               const size_t *displs, int dtype, int root);
COLLS_EXTERN int colls_scatterv(colls_group_t *g, const void *sbuf,
                                const size_t *scounts, const size_t *displs,
                                void *rbuf, size_t rcount, int dtype, int root);
COLLS_EXTERN int colls_allgatherv(colls_group_t *g, const void *sbuf,
                                  size_t scount, void *rbuf,
                                  const size_t *rcounts, const size_t *displs,
                                  int dtype);
COLLS_EXTERN int colls_alltoallv(colls_group_t *g, const void *sbuf,
                                 const size_t *scounts, const size_t *sdispls,
                                 void *rbuf, const size_t *rcounts,
                                 const size_t *rdispls, int dtype);

#ifdef __cplusplus
}
#endif
#endif /* COLLS_H */
