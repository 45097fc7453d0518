/* What a fresh 400 MB result costs before any feature is written: allocate,
   map every page, free; four times in a row and four times with a pause of
   5 s between (as between calls in an interactive session), for ordinary
   4 KB pages touched one by one, 4 KB pages mapped by one
   madvise(MADV_POPULATE_WRITE) (what rff_features() does, Linux 5.14), and
   transparent huge pages asked for with madvise(MADV_HUGEPAGE).
   Run: cc -O2 bench/pages.c -o pages && ./pages */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double one(int mode, size_t bytes)
{
    const uintptr_t page = 4096, huge = (uintptr_t) 1 << 21;
    double t0 = now();
    char *p = malloc(bytes);
    if (!p) return -1;
    uintptr_t a = ((uintptr_t) p + page - 1) & ~(page - 1);
    size_t len = ((uintptr_t) p + bytes - a) & ~(page - 1);
    if (mode == 2) {
        uintptr_t h = ((uintptr_t) p + huge - 1) & ~(huge - 1);
        madvise((void *) h, ((uintptr_t) p + bytes - h) & ~(huge - 1), MADV_HUGEPAGE);
    }
    if (mode == 1 && madvise((void *) a, len, MADV_POPULATE_WRITE) == 0) {
        /* mapped */
    } else {
        for (size_t off = 0; off < len; off += page) ((char *) a)[off] = 1;
    }
    double t = now() - t0;
    free(p);
    return t;
}

int main(void)
{
    const char *names[] = {"4 KB pages, touched", "4 KB pages, MADV_POPULATE_WRITE",
                           "huge pages (MADV_HUGEPAGE)"};
    const size_t bytes = 400000000;
    for (int pause = 0; pause <= 5; pause += 5)
        for (int mode = 0; mode < 3; mode++) {
            printf("%-32s pause %d s:", names[mode], pause);
            for (int r = 0; r < 4; r++) {
                printf(" %.3f", one(mode, bytes));
                fflush(stdout);
                if (pause) sleep(pause);
            }
            printf(" s\n");
        }
    return 0;
}
