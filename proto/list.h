/*
 * list.h -- one intrusive doubly linked list for the whole tree.
 *
 * A struct that lives on a list embeds a struct list_node; the list is a
 * struct list_node head that points at itself when empty.  Insertion at
 * either end and removal are O(1); nothing allocates.  An element is on at
 * most one list per node it embeds, and list_del leaves its node
 * self-linked, so removing it twice is harmless.  Iterate with
 * LIST_FOREACH_SAFE when the body may remove the current element.
 */
#ifndef COLLS_PROTO_LIST_H
#define COLLS_PROTO_LIST_H

#include <stddef.h>

struct list_node {
    struct list_node *next, *prev;
};

/* The struct of type T holding node n in its member m. */
#define list_entry(n, T, m) ((T *)(void *)((char *)(n)-offsetof(T, m)))

static inline void
list_init(struct list_node *h)
{
    h->next = h->prev = h;
}

static inline int
list_empty(const struct list_node *h)
{
    return h->next == h;
}

/* Inserts n between a and b. */
static inline void
list_insert_(struct list_node *n, struct list_node *a, struct list_node *b)
{
    n->prev = a;
    n->next = b;
    a->next = n;
    b->prev = n;
}

static inline void
list_add_tail(struct list_node *h, struct list_node *n)
{
    list_insert_(n, h->prev, h);
}

static inline void
list_add_head(struct list_node *h, struct list_node *n)
{
    list_insert_(n, h, h->next);
}

static inline void
list_del(struct list_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = n;
}

/* The first node of h, or NULL when h is empty. */
static inline struct list_node *
list_first(const struct list_node *h)
{
    return list_empty(h) ? NULL : h->next;
}

/* Visits every node n of h; n may be removed (tmp holds the next). */
#define LIST_FOREACH_SAFE(n, tmp, h)                                           \
    for ((n) = (h)->next, (tmp) = (n)->next; (n) != (h);                       \
         (n) = (tmp), (tmp) = (n)->next)

#define LIST_FOREACH(n, h) for ((n) = (h)->next; (n) != (h); (n) = (n)->next)

#endif
