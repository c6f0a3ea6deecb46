/*
 * admin.c -- requests about the machine (docs/protocol.md §7): host and
 * task tables, statistics, daemon-to-daemon ping, adding and deleting
 * hosts, halting.  Each is one request to the local daemon and its reply,
 * correlated by req_id and subject to colls_set_timeout().  Arrays and
 * strings returned are allocated here; release them with colls_free().
 *
 * API layer (internal.h): calls ctl.c only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Copies a protobuf string (NULL-safe) into a fixed field. */
static void
admin_copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src != NULL ? src : "");
}

/* Sends a request of kind with dst, expects a reply of kind want. */
static int
admin_call(colls_t *c, Kind kind, uint32_t dst, uint64_t count, Kind want,
           Envelope **rep)
{
    AdminTarget at = ADMIN_TARGET__INIT;
    Envelope e;
    int rc;

    if (c == NULL)
        return COLLS_EINVAL;
    envelope_init(&e);
    e.kind = kind;
    if (dst != 0 || count != 0) {
        at.all = dst == 0xffffffffu;
        at.hid = at.all ? 0 : dst;
        at.bytes = count;
        e.body_case = ENVELOPE__BODY_ADMIN_TARGET;
        e.admin_target = &at;
    }
    rc = colls__ctl_call(c, &e, rep);
    if (rc < 0)
        return rc;
    if ((*rep)->kind != want) {
        envelope_free(*rep);
        *rep = NULL;
        return COLLS_EPROTO;
    }
    return 0;
}

int
colls_hosts(colls_t *c, colls_hostinfo_t **out, int *n)
{
    Envelope *rep;
    colls_hostinfo_t *h;
    size_t i, nh;
    int rc;

    if (out == NULL || n == NULL)
        return COLLS_EINVAL;
    rc = admin_call(c, KIND__HOSTS_REQ, 0, 0, KIND__HOSTS_REP, &rep);
    if (rc < 0)
        return rc;
    nh = rep->body_case == ENVELOPE__BODY_HOST_TABLE ? rep->host_table->n_hosts
                                                     : 0;
    if (nh > 4096) {
        rc = COLLS_EPROTO;
        goto out;
    }
    h = calloc(nh ? nh : 1, sizeof(*h));
    if (h == NULL) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    for (i = 0; i < nh; i++) {
        const HostEntry *he = rep->host_table->hosts[i];
        h[i].hid = (int)he->hid;
        h[i].state = (int)he->state;
        h[i].incarnation = he->incarnation;
        admin_copy(h[i].name, sizeof(h[i].name), he->name);
        admin_copy(h[i].addr, sizeof(h[i].addr), he->addr);
        h[i].ntasks = (int)he->ntasks;
        h[i].rtt_us = he->rtt_us;
        admin_copy(h[i].arch, sizeof(h[i].arch), he->arch);
    }
    *out = h;
    *n = (int)nh;
out:
    envelope_free(rep);
    return rc;
}

int
colls_tasks(colls_t *c, int hid, colls_taskinfo_t **out, int *n)
{
    Envelope *rep;
    colls_taskinfo_t *t;
    size_t i, nt;
    uint32_t dst;
    int rc;

    if (out == NULL || n == NULL || (hid < 0 && hid != COLLS_ANY) || hid > 4095)
        return COLLS_EINVAL;
    dst = hid == COLLS_ANY ? 0xffffffffu : (uint32_t)hid;
    rc = admin_call(c, KIND__TASKS_REQ, dst, 0, KIND__TASKS_REP, &rep);
    if (rc < 0)
        return rc;
    nt = rep->body_case == ENVELOPE__BODY_TASK_LIST ? rep->task_list->n_tasks
                                                    : 0;
    if (nt > (1u << 24)) {
        rc = COLLS_EPROTO;
        goto out;
    }
    t = calloc(nt ? nt : 1, sizeof(*t));
    if (t == NULL) {
        rc = COLLS_ENOMEM;
        goto out;
    }
    for (i = 0; i < nt; i++) {
        const TaskEntry *te = rep->task_list->tasks[i];
        t[i].tid = te->tid;
        t[i].pid = te->pid;
        t[i].uid = te->uid;
        admin_copy(t[i].name, sizeof(t[i].name), te->name);
        t[i].parent = te->parent;
        admin_copy(t[i].channel, sizeof(t[i].channel), te->channel);
    }
    *out = t;
    *n = (int)nt;
out:
    envelope_free(rep);
    return rc;
}

int
colls_stats_json(colls_t *c, char **out)
{
    Envelope *rep;
    const char *json;
    int rc;

    if (out == NULL)
        return COLLS_EINVAL;
    rc = admin_call(c, KIND__STATS_REQ, 0, 0, KIND__STATS_REP, &rep);
    if (rc < 0)
        return rc;
    json = rep->body_case == ENVELOPE__BODY_STATS_REP &&
                   rep->stats_rep->json != NULL
               ? rep->stats_rep->json
               : "{}";
    *out = strdup(json);
    envelope_free(rep);
    return *out != NULL ? 0 : COLLS_ENOMEM;
}

int
colls_ping(colls_t *c, int hid, size_t len, double *rtt_us)
{
    Envelope *rep;
    int rc;

    if (rtt_us == NULL || hid <= 0 || hid > 4095)
        return COLLS_EINVAL;
    if (c != NULL && len > c->max_message)
        return COLLS_EMSGSIZE;
    rc =
        admin_call(c, KIND__PING_REQ, (uint32_t)hid, len, KIND__PING_REP, &rep);
    if (rc < 0)
        return rc;
    if (rep->body_case != ENVELOPE__BODY_PING_REP)
        rc = COLLS_EPROTO;
    else
        *rtt_us = rep->ping_rep->rtt_us;
    envelope_free(rep);
    return rc;
}

/* Copies a Plogp of the wire into *out; COLLS_EPROTO when malformed. */
static int
admin_plogp_copy(const Plogp *w, colls_plogp_t *out)
{
    size_t i, n = w->n_m;

    memset(out, 0, sizeof(*out));
    if (n > COLLS_PLOGP_MAX || w->n_g != n || w->n_gap != n || w->n_rtt != n ||
        w->n_gl != n || (w->n_o_s != 0 && w->n_o_s != n) ||
        (w->n_o_r != 0 && w->n_o_r != n))
        return COLLS_EPROTO;
    out->hid = (int)w->hid;
    out->epoch = w->epoch;
    out->L = w->l;
    out->Ll = w->ll;
    out->gamma = w->gamma;
    out->hop_us = w->hop_us;
    out->hop_byte_us = w->hop_byte_us;
    out->n = (int)n;
    for (i = 0; i < n; i++) {
        out->m[i] = (size_t)w->m[i];
        out->g[i] = w->g[i];
        out->gap[i] = w->gap[i];
        out->rtt[i] = w->rtt[i];
        out->gl[i] = w->gl[i];
        out->o_s[i] = w->n_o_s != 0 ? w->o_s[i] : 0.0;
        out->o_r[i] = w->n_o_r != 0 ? w->o_r[i] : 0.0;
    }
    return 0;
}

/* PARAMS_REQ q; the reply's parameters in *rep. */
static int
admin_params(colls_t *c, ParamsReq *q, Envelope **rep)
{
    Envelope e;
    int rc;

    if (c == NULL)
        return COLLS_EINVAL;
    envelope_init(&e);
    e.kind = KIND__PARAMS_REQ;
    e.body_case = ENVELOPE__BODY_PARAMS_REQ;
    e.params_req = q;
    rc = colls__ctl_call(c, &e, rep);
    if (rc < 0)
        return rc;
    if ((*rep)->kind != KIND__PARAMS_REP ||
        (*rep)->body_case != ENVELOPE__BODY_PLOGP) {
        envelope_free(*rep);
        *rep = NULL;
        return COLLS_EPROTO;
    }
    return 0;
}

int
colls_plogp_get(colls_t *c, colls_plogp_t *machine, colls_plogp_t **peers,
                int *npeers)
{
    ParamsReq q = PARAMS_REQ__INIT;
    Envelope *rep;
    const Plogp *w;
    size_t i;
    int rc;

    if (machine == NULL || (peers != NULL && npeers == NULL))
        return COLLS_EINVAL;
    q.action = PARAMS_GET;
    if ((rc = admin_params(c, &q, &rep)) < 0)
        return rc;
    w = rep->plogp;
    rc = admin_plogp_copy(w, machine);
    if (rc == 0 && peers != NULL) {
        *npeers = 0;
        *peers = calloc(w->n_peers ? w->n_peers : 1, sizeof(**peers));
        if (*peers == NULL)
            rc = COLLS_ENOMEM;
        for (i = 0; rc == 0 && i < w->n_peers; i++)
            if ((rc = admin_plogp_copy(w->peers[i], &(*peers)[i])) == 0)
                (*npeers)++;
        if (rc != 0) {
            free(*peers);
            *peers = NULL;
        }
    }
    envelope_free(rep);
    return rc;
}

/* Asks q and copies the row or summary of the answer into out. */
static int
admin_params_row(colls_t *c, ParamsReq *q, colls_plogp_t *out)
{
    Envelope *rep;
    int rc;

    if ((rc = admin_params(c, q, &rep)) < 0)
        return rc;
    rc = admin_plogp_copy(rep->plogp, out);
    envelope_free(rep);
    return rc;
}

/* The sizes of a measurement on the wire (uint64 each) into m. */
static void
admin_sizes(uint64_t *m, const size_t *sizes, int n, ParamsReq *q)
{
    int i;

    for (i = 0; i < n; i++)
        m[i] = sizes[i];
    q->n_sizes = (size_t)n;
    q->sizes = m;
}

int
colls_plogp_measure(colls_t *c, int hid, const size_t *sizes, int nsizes,
                    int reps, colls_plogp_t *row)
{
    ParamsReq q = PARAMS_REQ__INIT;
    uint64_t m[COLLS_PLOGP_MAX];

    if (row == NULL || hid <= 0 || hid > 4095 || nsizes < 0 ||
        nsizes > COLLS_PLOGP_MAX || (nsizes > 0 && sizes == NULL) || reps < 0)
        return COLLS_EINVAL;
    admin_sizes(m, sizes, nsizes, &q);
    q.action = PARAMS_MEASURE;
    q.hid = (uint32_t)hid;
    q.reps = (uint32_t)reps;
    return admin_params_row(c, &q, row);
}

int
colls_plogp_load(colls_t *c, const size_t *sizes, int nsizes, int reps,
                 colls_plogp_t *row)
{
    ParamsReq q = PARAMS_REQ__INIT;
    uint64_t m[COLLS_PLOGP_MAX];

    if (row == NULL || nsizes < 1 || nsizes > COLLS_PLOGP_MAX ||
        sizes == NULL || reps < 0)
        return COLLS_EINVAL;
    admin_sizes(m, sizes, nsizes, &q);
    q.action = PARAMS_LOAD;
    q.reps = (uint32_t)reps;
    return admin_params_row(c, &q, row);
}

int
colls_plogp_commit(colls_t *c, double hop_us, double hop_byte_us,
                   colls_plogp_t *machine)
{
    ParamsReq q = PARAMS_REQ__INIT;

    if (machine == NULL || !(hop_us >= 0.0) || !(hop_byte_us >= 0.0))
        return COLLS_EINVAL;
    q.action = PARAMS_COMMIT;
    q.hop_us = hop_us;
    q.hop_byte_us = hop_byte_us;
    return admin_params_row(c, &q, machine);
}

/* Sends a host operation and waits for ADMIN_REP. */
static int
admin_host_op(colls_t *c, Kind kind, int hid, const char *addr)
{
    Envelope e;
    HostOp op = HOST_OP__INIT;
    Envelope *rep;
    int rc;

    if (c == NULL)
        return COLLS_EINVAL;
    envelope_init(&e);
    e.kind = kind;
    if (kind != KIND__HALT) {
        op.hid = (uint32_t)hid;
        op.addr = (char *)(uintptr_t)(addr != NULL ? addr : "");
        e.body_case = ENVELOPE__BODY_HOST_OP;
        e.host_op = &op;
    }
    rc = colls__ctl_call(c, &e, &rep);
    if (rc < 0)
        return rc;
    if (rep->kind != KIND__ADMIN_REP)
        rc = COLLS_EPROTO;
    envelope_free(rep);
    return rc;
}

int
colls_add_host(colls_t *c, const char *hostport)
{
    if (hostport == NULL || hostport[0] == '\0' || strlen(hostport) > 255)
        return COLLS_EINVAL;
    return admin_host_op(c, KIND__ADD_HOST, 0, hostport);
}

int
colls_delete_host(colls_t *c, int hid)
{
    if (hid <= 0 || hid > 4095)
        return COLLS_EINVAL;
    return admin_host_op(c, KIND__DELETE_HOST, hid, NULL);
}

/*
 * Halts the whole machine.  The daemon may close the connection instead
 * of (or right after) answering, saying it shuts down or not (it exited
 * first); all count as success.
 */
int
colls_halt(colls_t *c)
{
    int rc = admin_host_op(c, KIND__HALT, 0, NULL);

    if (rc == COLLS_ESHUTDOWN || rc == COLLS_ECONNLOST)
        rc = 0;
    return rc;
}
