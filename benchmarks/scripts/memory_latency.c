// The latency of one dependent load at random over a buffer of a given size: what a cache miss
// costs on this machine at each working-set size (L1, L2, L3, memory), with and without
// transparent huge pages. A cached-block Get is a short chain of such loads (the cache entry, the
// block's restart keys, the entries it scans), so this sets its floor (docs/benchmarks.md,
// "A Get from a cached block").
//
//   gcc -O2 -o /tmp/memory_latency benchmarks/scripts/memory_latency.c
//   for mb in 1 4 12 32 128; do /tmp/memory_latency $mb; /tmp/memory_latency $mb huge; done
//
// Each 64-byte line of the buffer points at the next line of a random cycle through all of them,
// so every load waits for the one before it.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MiB [huge]\n", argv[0]);
        return 2;
    }
    size_t mib = (size_t)atoi(argv[1]);
    int huge = argc > 2;
    size_t lines = mib * 1024 * 1024 / 64;
    char* buf = aligned_alloc(2u << 20, lines * 64);
    size_t* order = malloc(lines * sizeof(size_t));
    if (buf == NULL || order == NULL || lines < 2) {
        fprintf(stderr, "cannot allocate %zu MiB\n", mib);
        return 1;
    }
    if (huge) {
        madvise(buf, lines * 64, MADV_HUGEPAGE);
    }
    for (size_t i = 0; i < lines; i++) {
        order[i] = i;
    }
    srand(1);
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = ((size_t)rand() * RAND_MAX + (size_t)rand()) % (i + 1);
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++) {
        *(void**)(buf + order[i] * 64) = buf + order[(i + 1) % lines] * 64;
    }
    void* p = buf;
    const long loads = 20000000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < loads; i++) {
        p = *(void**)p;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)loads;
    printf("%zu MiB%s: %.1f ns per dependent load (%p)\n", mib, huge ? " (huge pages advised)" : "", ns, p);
    return 0;
}
