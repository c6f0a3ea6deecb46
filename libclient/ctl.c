/*
 * ctl.c -- control requests: one request to the local daemon, one reply
 * with the same req_id (attach, group joins, admin calls, ROUTE_REQ).
 *
 * A request is a colls__ctl on colls_t.ctls from the moment it is written
 * until its reply comes (colls__ctl_reply, from the frame dispatcher in
 * colls.c) or the daemon connection is lost (colls__ctl_fail_all).  A
 * blocking call waits for it (colls__ctl_call, subject to the timeout); a
 * request with a callback (ROUTE_REQ for the direct route) is completed
 * from the loop and its callback frees it.  The daemon answers in order,
 * so a reply without an id answers the oldest request.
 *
 * API layer (internal.h): may call the connection layer (conn.h) and
 * colls.c's loop.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Frees ctl, unlinking it if it still waits. */
void
colls__ctl_free(struct colls__ctl *ctl)
{
    if (ctl == NULL)
        return;
    list_del(&ctl->link);
    envelope_free(ctl->rep);
    free(ctl->payload);
    free(ctl);
}

/* Keeps the daemon's words of failed reply e for colls_errmsg(): the
   text of an ERROR, the reason of a GROUP_FAILED, else "". */
static void
ctl_keep_errmsg(colls_t *c, const Envelope *e)
{
    const char *m = NULL;

    if (e->body_case == ENVELOPE__BODY_ERROR && e->error != NULL)
        m = e->error->message;
    else if (e->body_case == ENVELOPE__BODY_GROUP_FAILED &&
             e->group_failed != NULL)
        m = e->group_failed->why;
    snprintf(c->errmsg, sizeof(c->errmsg), "%s", m != NULL ? m : "");
}

/* Completes ctl (reply or status set); calls its callback if any. */
static void
ctl_finish(colls_t *c, struct colls__ctl *ctl)
{
    list_del(&ctl->link);
    ctl->done = 1;
    if (ctl->cb != NULL)
        ctl->cb(c, ctl);
}

/*
 * Sends request e to the daemon with a fresh req_id and queues ctl to be
 * completed by the reply.  0 or a COLLS_E* code (ctl not queued).
 */
int
colls__ctl_send(colls_t *c, Envelope *e, struct colls__ctl *ctl)
{
    int rc;

    if (c->conn.daemon == NULL)
        return c->conn.err ? c->conn.err : COLLS_ENOTCONN;
    ctl->req_id = colls__conn_req_id(&c->conn);
    e->req_id = ctl->req_id;
    e->src = c->conn.tid;
    rc = colls__write_env(c->conn.daemon, e, NULL, 0, NULL);
    if (rc < 0)
        return rc;
    list_add_tail(&c->ctls, &ctl->link);
    return 0;
}

static int
ctl_pred(void *arg)
{
    return ((struct colls__ctl *)arg)->done;
}

/*
 * Sends request e and waits (subject to the timeout) for its reply.  On
 * success *rep is the reply (free with envelope_free).  An ERROR reply or
 * a reply with a non-zero status becomes that status.
 */
int
colls__ctl_call(colls_t *c, Envelope *e, Envelope **rep)
{
    struct colls__ctl *ctl = calloc(1, sizeof(*ctl));
    int rc;

    *rep = NULL;
    if (ctl == NULL)
        return COLLS_ENOMEM;
    list_init(&ctl->link);
    rc = colls__ctl_send(c, e, ctl);
    if (rc < 0) {
        free(ctl);
        return rc;
    }
    rc = colls__wait(c, ctl_pred, ctl, 1);
    if (rc == 0 && ctl->status < 0)
        rc = ctl->status;
    if (rc == 0 && ctl->rep->kind == KIND__ERROR) {
        ctl_keep_errmsg(c, ctl->rep);
        rc = ctl->rep->status < 0 ? ctl->rep->status : COLLS_EPROTO;
    }
    if (rc == 0 && ctl->rep->status < 0) {
        ctl_keep_errmsg(c, ctl->rep);
        rc = ctl->rep->status;
    }
    if (rc == 0) {
        *rep = ctl->rep;
        ctl->rep = NULL;
    }
    colls__ctl_free(ctl);
    return rc;
}

/* Fails every control request with status: the daemon is gone. */
void
colls__ctl_fail_all(colls_t *c, int status)
{
    struct list_node *n;

    while ((n = list_first(&c->ctls)) != NULL) {
        struct colls__ctl *ctl = list_entry(n, struct colls__ctl, link);
        ctl->status = status;
        ctl_finish(c, ctl);
    }
}

/*
 * A frame from the daemon that is no message, notice or collective
 * result: the reply to a control request.  Completes it.  Takes e and
 * payload.
 */
void
colls__ctl_reply(colls_t *c, Envelope *e, uint8_t *payload, size_t plen)
{
    struct list_node *n;
    struct colls__ctl *ctl = NULL;

    LIST_FOREACH (n, &c->ctls) {
        struct colls__ctl *x = list_entry(n, struct colls__ctl, link);
        if (x->req_id == e->req_id) {
            ctl = x;
            break;
        }
    }
    /* A reply without an id answers the oldest request (the daemon
       answers in order). */
    if (ctl == NULL && e->req_id == 0 && !list_empty(&c->ctls))
        ctl = list_entry(c->ctls.next, struct colls__ctl, link);
    if (ctl == NULL) {
        /* An ERROR nobody asked for says why the daemon is about to
           close the connection (e.g. COLLS_ENOBUFS: too much queued for
           this task): calls that fail on the close report it. */
        if (e->kind == KIND__ERROR && e->status < 0 && c->conn.err == 0) {
            c->conn.err = e->status;
            ctl_keep_errmsg(c, e);
        }
        envelope_free(e);
        free(payload);
        return;
    }
    ctl->rep = e;
    ctl->payload = payload;
    ctl->plen = plen;
    ctl_finish(c, ctl);
}

/* ROUTE_REP (or its failure): hand the address down to the direct route. */
static void
ctl_route_cb(colls_t *c, struct colls__ctl *ctl)
{
    const Envelope *e = ctl->rep;
    const char *addr = NULL;
    const uint8_t *ticket = NULL;
    size_t ticket_len = 0;

    if (ctl->status == 0 && e != NULL && e->kind == KIND__ROUTE_REP &&
        e->status >= 0 && e->body_case == ENVELOPE__BODY_ROUTE_REP) {
        addr = e->route_rep->addr;
        ticket = e->route_rep->ticket.data;
        ticket_len = e->route_rep->ticket.len;
    }
    colls__direct_resolved(&c->conn, ctl->tid, addr, ticket, ticket_len);
    colls__ctl_free(ctl);
}

/*
 * ops->resolve: the direct route asks where tid listens.  Sends ROUTE_REQ;
 * the answer (or the failure to ask) goes down through
 * colls__direct_resolved().
 */
void
colls__ctl_resolve(struct colls__conn *cn, colls_tid_t tid)
{
    colls_t *c = COLLS__OF(cn);
    struct colls__ctl *ctl = calloc(1, sizeof(*ctl));
    Envelope e;

    if (ctl == NULL) {
        colls__direct_resolved(cn, tid, NULL, NULL, 0);
        return;
    }
    list_init(&ctl->link);
    ctl->cb = ctl_route_cb;
    ctl->tid = tid;
    envelope_init(&e);
    e.kind = KIND__ROUTE_REQ;
    e.dst = tid;
    if (colls__ctl_send(c, &e, ctl) < 0) {
        free(ctl);
        colls__direct_resolved(cn, tid, NULL, NULL, 0);
    }
}
