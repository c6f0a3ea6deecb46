/*
 * replay.c -- runs fuzz targets over files with the ordinary compiler:
 *     replay TARGET FILE...
 * so the committed corpora are exercised by make check (and by the
 * sanitizer build) even where libFuzzer is not available.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"

static int
run_file(const struct fuzz_target *t, const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long size;
    int rc = -1;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0)
        goto out;
    data = malloc(size > 0 ? (size_t)size : 1);
    if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size)
        goto out;
    t->fn(data, (size_t)size);
    rc = 0;
out:
    if (rc != 0)
        fprintf(stderr, "replay: cannot read %s\n", path);
    free(data);
    fclose(f);
    return rc;
}

int
main(int argc, char **argv)
{
    const struct fuzz_target *t;
    int i, n = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: replay TARGET FILE...\n");
        return 2;
    }
    for (t = fuzz_targets; t->name != NULL; t++)
        if (strcmp(t->name, argv[1]) == 0)
            break;
    if (t->name == NULL) {
        fprintf(stderr, "replay: unknown target %s\n", argv[1]);
        return 2;
    }
    for (i = 2; i < argc; i++, n++)
        if (run_file(t, argv[i]) != 0)
            return 1;
    printf("replay %s: %d inputs\n", t->name, n);
    return 0;
}
