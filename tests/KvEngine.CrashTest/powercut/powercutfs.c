/*
 * powercutfs: a FUSE file system that loses, at a power cut, exactly what a strict POSIX file
 * system may lose (kvcrashtest --power-cut; docs/design.md "Stress and crash testing").
 *
 * The whole file system lives in this process's memory. Every file keeps two contents: the
 * volatile one (what reads see; every WRITE, truncate and fallocate lands here) and the durable
 * one (what survives a cut). FSYNC of a file, with or without the datasync flag, copies the
 * volatile content and size into the durable one (page by page: only pages written since the last
 * sync are copied). Every directory keeps two entry tables the same way: create, mkdir, unlink,
 * rmdir, rename and link change the volatile table; FSYNCDIR of the directory copies its volatile
 * table into its durable table (ext4 without auto_da_alloc, i.e. strict POSIX: a file's fsync does
 * not make its name durable, a rename is durable only after an fsync of the directory).
 *
 * The cut: reading the control file /.powercut (kept out of directory listings, read without the
 * page cache) freezes the file system under its lock and answers with what the cut drops. From then
 * on every request fails with EIO (release excepted), so nothing the dying writer or the kernel's
 * late writeback of dirty (for example memory-mapped) pages sends can become durable. The driver
 * then SIGKILLs the writer and unmounts; at exit the durable state (durable entry tables from the
 * root, durable contents, hard links kept) is written to the --save directory, which the next
 * mount loads with --image. An unmount without a cut is a clean shutdown: the volatile state is
 * saved (everything written is kept, as a clean unmount flushes it).
 *
 * Requests are served on libfuse's threads, all under one mutex (g_lock); the state below is only
 * touched under it. Nodes are counted by volatile links, durable links and open handles; a node's
 * volatile pages are freed once it has neither volatile links nor open handles, its durable pages
 * once it has no link of either kind.
 *
 * --keep-unsynced-one-in N --seed S lets each unsynced data page survive the cut with probability
 * 1/N (keep_some_unsynced), as a disk that wrote some pages back, in any order, before it failed.
 * --lie-fsync SUFFIX makes the fsync of files created with a name ending in SUFFIX succeed without
 * making anything durable (a disk that lies), so a test can show that lost synced data is caught.
 *
 * Build: cc -O2 -Wall -o powercutfs powercutfs.c $(pkg-config --cflags --libs fuse3)
 * Run:   powercutfs [--image DIR] --save DIR [--lie-fsync SUFFIX] [--keep-unsynced-one-in N --seed S]
 *        MOUNTPOINT [libfuse options, e.g. -f]
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <fuse.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define CONTROL_NAME ".powercut"
#define CONTROL_FH 1 /* the control file's handle (never a node's address) */

struct node;

struct dent {
    char *name;
    struct node *node;
};

struct table {
    struct dent *e;
    size_t n, cap;
};

struct node {
    uint64_t ino;
    int is_dir;
    mode_t mode;
    long vlinks, dlinks, opens;
    /* file: volatile content */
    uint8_t **vp;       /* vcap pages, NULL = zeros; bytes at and past vsize are zero */
    uint8_t *dirty;     /* vcap flags: page changed since the last sync */
    size_t vcap;
    uint64_t vsize;
    /* file: durable content */
    uint8_t **dp;
    size_t dcap;
    uint64_t dsize;
    /* directory */
    struct table vt, dt;
    struct timespec mtime;
    int lies;           /* --lie-fsync: its fsync succeeds without making anything durable */
    char *saved_path;   /* while saving: where it was written (hard links) */
    struct node *all;   /* every node ever made (g_all), for the cut */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *g_root;
static uint64_t g_next_ino = 2;
static struct node *g_all;
static unsigned g_keep_one_in;  /* --keep-unsynced-one-in N: at the cut, each unsynced data page survives with probability 1/N */
static uint64_t g_rng = 0x9E3779B97F4A7C15u;
static uint64_t g_pages_kept;
static int g_frozen;
static const char *g_image;
static const char *g_save;
static const char *g_lie_suffix; /* --lie-fsync SUFFIX: a broken disk, to show the verifier notices */
/* counters */
static uint64_t g_writes, g_write_bytes, g_fsyncs, g_fsyncdirs, g_refused_after_cut, g_pages_synced;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "powercutfs: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s ? s : 1);
    if (!p)
        die("out of memory");
    return p;
}

static struct node *new_node(int is_dir, mode_t mode)
{
    struct node *n = xcalloc(1, sizeof *n);
    n->ino = g_next_ino++;
    n->all = g_all;
    g_all = n;
    n->is_dir = is_dir;
    n->mode = mode;
    clock_gettime(CLOCK_REALTIME, &n->mtime);
    return n;
}

/* ---- pages ---- */

static void grow_pages(uint8_t ***pages, uint8_t **dirty, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    uint8_t **p = realloc(*pages, c * sizeof *p);
    if (!p)
        die("out of memory");
    memset(p + *cap, 0, (c - *cap) * sizeof *p);
    *pages = p;
    if (dirty) {
        uint8_t *d = realloc(*dirty, c);
        if (!d)
            die("out of memory");
        memset(d + *cap, 0, c - *cap);
        *dirty = d;
    }
    *cap = c;
}

static size_t pages_for(uint64_t size) { return (size_t)((size + PAGE - 1) / PAGE); }

static void free_pages(uint8_t **pages, size_t cap)
{
    for (size_t i = 0; i < cap; i++)
        free(pages[i]);
}

static void drop_volatile(struct node *n)
{
    free_pages(n->vp, n->vcap);
    free(n->vp);
    free(n->dirty);
    n->vp = NULL;
    n->dirty = NULL;
    n->vcap = 0;
    n->vsize = 0;
}

static void drop_durable(struct node *n)
{
    free_pages(n->dp, n->dcap);
    free(n->dp);
    n->dp = NULL;
    n->dcap = 0;
    n->dsize = 0;
}

/* Called after a link or handle went away. */
static void maybe_release(struct node *n)
{
    if (n->is_dir)
        return;
    if (n->vlinks == 0 && n->opens == 0) {
        drop_volatile(n);
        if (n->dlinks == 0)
            drop_durable(n);
    }
}

static void vwrite(struct node *n, const char *buf, size_t size, uint64_t off)
{
    uint64_t end = off + size;
    grow_pages(&n->vp, &n->dirty, &n->vcap, pages_for(end));
    while (size > 0) {
        size_t pg = (size_t)(off / PAGE), in = (size_t)(off % PAGE);
        size_t k = PAGE - in < size ? PAGE - in : size;
        if (!n->vp[pg])
            n->vp[pg] = xcalloc(1, PAGE);
        memcpy(n->vp[pg] + in, buf, k);
        n->dirty[pg] = 1;
        buf += k;
        off += k;
        size -= k;
    }
    if (end > n->vsize)
        n->vsize = end;
}

static void vtruncate(struct node *n, uint64_t size)
{
    if (size < n->vsize) {
        size_t keep = pages_for(size), old = pages_for(n->vsize);
        for (size_t i = keep; i < old && i < n->vcap; i++) {
            free(n->vp[i]);
            n->vp[i] = NULL;
            n->dirty[i] = 1;
        }
        if (size % PAGE && n->vp[size / PAGE]) {
            memset(n->vp[size / PAGE] + size % PAGE, 0, PAGE - size % PAGE);
            n->dirty[size / PAGE] = 1;
        }
    } else {
        grow_pages(&n->vp, &n->dirty, &n->vcap, pages_for(size));
        /* the new range reads as zeros; pages the durable copy still has there must change */
        for (size_t i = pages_for(n->vsize); i < pages_for(size); i++)
            n->dirty[i] = 1;
        if (n->vsize % PAGE)
            n->dirty[n->vsize / PAGE] = 1;
    }
    n->vsize = size;
}

static void make_durable(struct node *n)
{
    size_t need = pages_for(n->vsize);
    grow_pages(&n->dp, NULL, &n->dcap, need);
    for (size_t i = 0; i < n->vcap && i < need; i++) {
        if (!n->dirty[i])
            continue;
        if (n->vp[i]) {
            if (!n->dp[i])
                n->dp[i] = xcalloc(1, PAGE);
            memcpy(n->dp[i], n->vp[i], PAGE);
        } else {
            free(n->dp[i]);
            n->dp[i] = NULL;
        }
        n->dirty[i] = 0;
        g_pages_synced++;
    }
    for (size_t i = need; i < n->dcap; i++) {
        free(n->dp[i]);
        n->dp[i] = NULL;
    }
    for (size_t i = need; i < n->vcap; i++)
        n->dirty[i] = 0;
    n->dsize = n->vsize;
}

/* ---- directory tables ---- */

static struct dent *tfind(struct table *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->e[i].name, name) == 0)
            return &t->e[i];
    return NULL;
}

static void tadd(struct table *t, const char *name, struct node *n)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 8;
        t->e = realloc(t->e, t->cap * sizeof *t->e);
        if (!t->e)
            die("out of memory");
    }
    t->e[t->n].name = strdup(name);
    t->e[t->n].node = n;
    t->n++;
}

static void tremove(struct table *t, struct dent *d)
{
    free(d->name);
    *d = t->e[--t->n];
}

/* fsync of a directory: its durable table becomes its volatile one. */
static void dir_make_durable(struct node *dir)
{
    struct table *v = &dir->vt, *d = &dir->dt;
    for (size_t i = 0; i < v->n; i++)
        v->e[i].node->dlinks++;
    struct dent *old = d->e;
    size_t oldn = d->n;
    d->e = NULL;
    d->n = d->cap = 0;
    for (size_t i = 0; i < v->n; i++)
        tadd(d, v->e[i].name, v->e[i].node);
    for (size_t i = 0; i < oldn; i++) {
        old[i].node->dlinks--;
        maybe_release(old[i].node);
        free(old[i].name);
    }
    free(old);
}

/* ---- paths ---- */

static int is_control(const char *path) { return strcmp(path, "/" CONTROL_NAME) == 0; }

static struct node *resolve(const char *path)
{
    struct node *n = g_root;
    char buf[PATH_MAX];
    if (strlen(path) >= sizeof buf)
        return NULL;
    strcpy(buf, path);
    char *save = NULL;
    for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!n->is_dir)
            return NULL;
        struct dent *d = tfind(&n->vt, c);
        if (!d)
            return NULL;
        n = d->node;
    }
    return n;
}

/* The parent directory of path and the last component (in buf). */
static struct node *resolve_parent(const char *path, char *name, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash || strlen(slash + 1) >= cap || slash[1] == 0)
        return NULL;
    strcpy(name, slash + 1);
    char dir[PATH_MAX];
    size_t len = (size_t)(slash - path);
    if (len >= sizeof dir)
        return NULL;
    memcpy(dir, path, len);
    dir[len] = 0;
    struct node *p = resolve(len ? dir : "/");
    return p && p->is_dir ? p : NULL;
}

#define LOCKED_ENTRY()               \
    pthread_mutex_lock(&g_lock);     \
    if (g_frozen) {                  \
        g_refused_after_cut++;       \
        pthread_mutex_unlock(&g_lock); \
        return -EIO;                 \
    }
#define UNLOCK_RETURN(rc)          \
    do {                           \
        int rc_ = (rc);            \
        pthread_mutex_unlock(&g_lock); \
        return rc_;                \
    } while (0)

static struct node *fh_node(struct fuse_file_info *fi)
{
    return fi->fh == CONTROL_FH ? NULL : (struct node *)(uintptr_t)fi->fh;
}

/* ---- operations ---- */

static void *pc_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->use_ino = 1;
    cfg->hard_remove = 1;
    cfg->nullpath_ok = 1;
    cfg->kernel_cache = 0;
    return NULL;
}

static void fill_stat(struct node *n, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = n->ino;
    st->st_mode = n->mode;
    st->st_nlink = n->is_dir ? 2 : (n->vlinks > 0 ? n->vlinks : 1);
    st->st_size = n->is_dir ? 4096 : (off_t)n->vsize;
    st->st_blksize = PAGE;
    st->st_blocks = (st->st_size + 511) / 512;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_mtim = st->st_ctim = st->st_atim = n->mtime;
}

static int pc_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    if ((fi && fi->fh == CONTROL_FH) || (path && is_control(path))) {
        memset(st, 0, sizeof *st);
        st->st_ino = 1u << 30;
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        return 0;
    }
    LOCKED_ENTRY();
    struct node *n = fi ? fh_node(fi) : resolve(path);
    if (!n)
        UNLOCK_RETURN(-ENOENT);
    fill_stat(n, st);
    UNLOCK_RETURN(0);
}

static int pc_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags)
{
    (void)off;
    (void)flags;
    LOCKED_ENTRY();
    struct node *d = fi && fi->fh ? fh_node(fi) : resolve(path);
    if (!d || !d->is_dir)
        UNLOCK_RETURN(-ENOTDIR);
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    for (size_t i = 0; i < d->vt.n; i++) {
        struct stat st;
        fill_stat(d->vt.e[i].node, &st);
        fill(buf, d->vt.e[i].name, &st, 0, 0);
    }
    UNLOCK_RETURN(0);
}

static int pc_opendir(const char *path, struct fuse_file_info *fi)
{
    LOCKED_ENTRY();
    struct node *d = resolve(path);
    if (!d)
        UNLOCK_RETURN(-ENOENT);
    if (!d->is_dir)
        UNLOCK_RETURN(-ENOTDIR);
    fi->fh = (uintptr_t)d;
    UNLOCK_RETURN(0);
}

static int pc_releasedir(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    (void)fi;
    return 0;
}

static int add_entry(const char *path, struct node *n)
{
    char name[NAME_MAX + 1];
    struct node *p = resolve_parent(path, name, sizeof name);
    if (!p)
        return -ENOENT;
    if (strcmp(name, CONTROL_NAME) == 0)
        return -EPERM;
    if (tfind(&p->vt, name))
        return -EEXIST;
    tadd(&p->vt, name, n);
    n->vlinks++;
    clock_gettime(CLOCK_REALTIME, &p->mtime);
    return 0;
}

static int pc_mkdir(const char *path, mode_t mode)
{
    LOCKED_ENTRY();
    struct node *n = new_node(1, S_IFDIR | (mode & 07777));
    int rc = add_entry(path, n);
    if (rc)
        free(n);
    UNLOCK_RETURN(rc);
}

static int pc_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    LOCKED_ENTRY();
    struct node *n = new_node(0, S_IFREG | (mode & 07777));
    size_t pl = strlen(path), sl = g_lie_suffix ? strlen(g_lie_suffix) : 0;
    n->lies = g_lie_suffix && pl >= sl && strcmp(path + pl - sl, g_lie_suffix) == 0;
    int rc = add_entry(path, n);
    if (rc) {
        free(n);
        UNLOCK_RETURN(rc);
    }
    n->opens++;
    fi->fh = (uintptr_t)n;
    UNLOCK_RETURN(0);
}

static int pc_open(const char *path, struct fuse_file_info *fi)
{
    if (is_control(path)) {
        fi->direct_io = 1;
        fi->fh = CONTROL_FH;
        return 0;
    }
    LOCKED_ENTRY();
    struct node *n = resolve(path);
    if (!n)
        UNLOCK_RETURN(-ENOENT);
    if (n->is_dir)
        UNLOCK_RETURN(-EISDIR);
    if (fi->flags & O_TRUNC)
        vtruncate(n, 0);
    fi->keep_cache = 1; /* every change goes through this mount: the kernel's cache stays right */
    n->opens++;
    fi->fh = (uintptr_t)n;
    UNLOCK_RETURN(0);
}

static int pc_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    pthread_mutex_lock(&g_lock);
    struct node *n = fh_node(fi);
    if (n) {
        n->opens--;
        maybe_release(n);
    }
    pthread_mutex_unlock(&g_lock);
    return 0;
}

static uint64_t next_random(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/*
 * --keep-unsynced-one-in: a disk that had written some unsynced pages back before the power
 * failed, in any order. Each page written since the file's last sync (and holding data; pages a
 * truncation dropped are not candidates) becomes durable with probability 1/N, and the durable
 * size grows to cover it, so unkept pages before it read as zeros (as a hole in an extent the
 * file system allocated). Files whose volatile size shrank below the durable one are left alone
 * (a truncation is metadata, not a page write).
 */
static void keep_some_unsynced(struct node *n)
{
    if (n->is_dir || n->lies || n->vsize < n->dsize)
        return;
    size_t need = pages_for(n->vsize);
    grow_pages(&n->dp, NULL, &n->dcap, need);
    for (size_t i = 0; i < need && i < n->vcap; i++) {
        if (!n->dirty[i] || !n->vp[i] || next_random() % g_keep_one_in != 0)
            continue;
        if (!n->dp[i])
            n->dp[i] = xcalloc(1, PAGE);
        memcpy(n->dp[i], n->vp[i], PAGE);
        n->dirty[i] = 0;
        uint64_t end = (uint64_t)(i + 1) * PAGE < n->vsize ? (uint64_t)(i + 1) * PAGE : n->vsize;
        if (end > n->dsize)
            n->dsize = end;
        g_pages_kept++;
    }
}

/* The cut: freeze, and tell the driver what is being dropped. */
static int control_read(char *buf, size_t size, off_t off)
{
    if (off > 0)
        return 0;
    pthread_mutex_lock(&g_lock);
    int again = g_frozen;
    g_frozen = 1;
    for (struct node *n = g_all; n && !again && g_keep_one_in; n = n->all)
        keep_some_unsynced(n);
    pthread_mutex_unlock(&g_lock);
    char text[256];
    int len = snprintf(text, sizeof text,
                       "%s writes %llu write_bytes %llu fsyncs %llu fsyncdirs %llu pages_synced %llu unsynced_pages_kept %llu\n",
                       again ? "already-cut" : "cut", (unsigned long long)g_writes, (unsigned long long)g_write_bytes,
                       (unsigned long long)g_fsyncs, (unsigned long long)g_fsyncdirs, (unsigned long long)g_pages_synced,
                       (unsigned long long)g_pages_kept);
    if ((size_t)len > size)
        len = (int)size;
    memcpy(buf, text, (size_t)len);
    return len;
}

static int pc_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    if (fi->fh == CONTROL_FH)
        return control_read(buf, size, off);
    LOCKED_ENTRY();
    struct node *n = fh_node(fi);
    if (!n)
        UNLOCK_RETURN(-EBADF);
    if ((uint64_t)off >= n->vsize)
        UNLOCK_RETURN(0);
    if (off + size > n->vsize)
        size = (size_t)(n->vsize - (uint64_t)off);
    size_t done = 0;
    while (done < size) {
        uint64_t o = (uint64_t)off + done;
        size_t pg = (size_t)(o / PAGE), in = (size_t)(o % PAGE);
        size_t k = PAGE - in < size - done ? PAGE - in : size - done;
        if (pg < n->vcap && n->vp[pg])
            memcpy(buf + done, n->vp[pg] + in, k);
        else
            memset(buf + done, 0, k);
        done += k;
    }
    UNLOCK_RETURN((int)size);
}

static int pc_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    LOCKED_ENTRY();
    struct node *n = fh_node(fi);
    if (!n)
        UNLOCK_RETURN(-EBADF);
    vwrite(n, buf, size, (uint64_t)off);
    clock_gettime(CLOCK_REALTIME, &n->mtime);
    g_writes++;
    g_write_bytes += size;
    UNLOCK_RETURN((int)size);
}

static int pc_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    LOCKED_ENTRY();
    struct node *n = fi ? fh_node(fi) : resolve(path);
    if (!n)
        UNLOCK_RETURN(-ENOENT);
    if (n->is_dir)
        UNLOCK_RETURN(-EISDIR);
    vtruncate(n, (uint64_t)size);
    UNLOCK_RETURN(0);
}

static int pc_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
    (void)path;
    LOCKED_ENTRY();
    struct node *n = fh_node(fi);
    if (!n)
        UNLOCK_RETURN(-EBADF);
    if (mode != 0 && mode != FALLOC_FL_KEEP_SIZE)
        UNLOCK_RETURN(-EOPNOTSUPP);
    if (mode == 0 && (uint64_t)(off + len) > n->vsize)
        vtruncate(n, (uint64_t)(off + len));
    UNLOCK_RETURN(0);
}

static int pc_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    (void)datasync; /* fdatasync keeps the size too: it is needed to read the data back */
    LOCKED_ENTRY();
    struct node *n = fh_node(fi);
    if (!n)
        UNLOCK_RETURN(-EBADF);
    if (!n->lies)
        make_durable(n);
    g_fsyncs++;
    UNLOCK_RETURN(0);
}

static int pc_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)datasync;
    LOCKED_ENTRY();
    struct node *d = fi && fi->fh ? fh_node(fi) : resolve(path);
    if (!d || !d->is_dir)
        UNLOCK_RETURN(-ENOTDIR);
    dir_make_durable(d);
    g_fsyncdirs++;
    UNLOCK_RETURN(0);
}

/* unlink (dir == 0) and rmdir (dir == 1): the volatile entry goes; the durable one stays until fsyncdir. */
static int remove_entry(const char *path, int dir)
{
    LOCKED_ENTRY();
    char name[NAME_MAX + 1];
    struct node *p = resolve_parent(path, name, sizeof name);
    struct dent *d = p ? tfind(&p->vt, name) : NULL;
    if (!d)
        UNLOCK_RETURN(-ENOENT);
    struct node *n = d->node;
    if (n->is_dir != dir)
        UNLOCK_RETURN(dir ? -ENOTDIR : -EISDIR);
    if (dir && n->vt.n)
        UNLOCK_RETURN(-ENOTEMPTY);
    tremove(&p->vt, d);
    n->vlinks--;
    maybe_release(n);
    clock_gettime(CLOCK_REALTIME, &p->mtime);
    UNLOCK_RETURN(0);
}

static int pc_unlink(const char *path) { return remove_entry(path, 0); }

static int pc_rmdir(const char *path) { return remove_entry(path, 1); }

static int pc_rename(const char *from, const char *to, unsigned int flags)
{
    LOCKED_ENTRY();
    if (flags & ~RENAME_NOREPLACE)
        UNLOCK_RETURN(-EINVAL);
    char fname[NAME_MAX + 1], tname[NAME_MAX + 1];
    struct node *fp = resolve_parent(from, fname, sizeof fname);
    struct node *tp = resolve_parent(to, tname, sizeof tname);
    struct dent *fd = fp ? tfind(&fp->vt, fname) : NULL;
    if (!fd || !tp)
        UNLOCK_RETURN(-ENOENT);
    if (strcmp(tname, CONTROL_NAME) == 0)
        UNLOCK_RETURN(-EPERM);
    struct node *n = fd->node;
    struct dent *td = tfind(&tp->vt, tname);
    if (td && td->node == n)
        UNLOCK_RETURN(0);
    if (td) {
        if (flags & RENAME_NOREPLACE)
            UNLOCK_RETURN(-EEXIST);
        struct node *old = td->node;
        if (old->is_dir != n->is_dir)
            UNLOCK_RETURN(old->is_dir ? -EISDIR : -ENOTDIR);
        if (old->is_dir && old->vt.n)
            UNLOCK_RETURN(-ENOTEMPTY);
        td->node = n;
        old->vlinks--;
        maybe_release(old);
    } else {
        tadd(&tp->vt, tname, n);
    }
    fd = tfind(&fp->vt, fname); /* tadd may have moved the table */
    tremove(&fp->vt, fd);
    clock_gettime(CLOCK_REALTIME, &fp->mtime);
    tp->mtime = fp->mtime;
    UNLOCK_RETURN(0);
}

static int pc_link(const char *from, const char *to)
{
    LOCKED_ENTRY();
    struct node *n = resolve(from);
    if (!n)
        UNLOCK_RETURN(-ENOENT);
    if (n->is_dir)
        UNLOCK_RETURN(-EPERM);
    UNLOCK_RETURN(add_entry(to, n));
}

static int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    LOCKED_ENTRY();
    struct node *n = fi ? fh_node(fi) : resolve(path);
    if (!n)
        UNLOCK_RETURN(-ENOENT);
    n->mode = (n->mode & S_IFMT) | (mode & 07777);
    UNLOCK_RETURN(0);
}

static int pc_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    (void)path;
    (void)uid;
    (void)gid;
    (void)fi;
    LOCKED_ENTRY();
    UNLOCK_RETURN(0);
}

static int pc_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    LOCKED_ENTRY();
    struct node *n = fi ? fh_node(fi) : resolve(path);
    if (!n)
        UNLOCK_RETURN(-ENOENT);
    if (tv && tv[1].tv_nsec != UTIME_OMIT)
        n->mtime = tv[1].tv_nsec == UTIME_NOW ? n->mtime : tv[1];
    UNLOCK_RETURN(0);
}

static int pc_statfs(const char *path, struct statvfs *st)
{
    (void)path;
    memset(st, 0, sizeof *st);
    st->f_bsize = st->f_frsize = PAGE;
    st->f_blocks = st->f_bfree = st->f_bavail = 1u << 22; /* 16 GiB */
    st->f_files = st->f_ffree = 1u << 20;
    st->f_namemax = NAME_MAX;
    return 0;
}

static int pc_flush(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    (void)fi;
    return 0;
}

static const struct fuse_operations ops = {
    .init = pc_init,
    .getattr = pc_getattr,
    .readdir = pc_readdir,
    .opendir = pc_opendir,
    .releasedir = pc_releasedir,
    .mkdir = pc_mkdir,
    .create = pc_create,
    .open = pc_open,
    .release = pc_release,
    .read = pc_read,
    .write = pc_write,
    .truncate = pc_truncate,
    .fallocate = pc_fallocate,
    .fsync = pc_fsync,
    .fsyncdir = pc_fsyncdir,
    .unlink = pc_unlink,
    .rmdir = pc_rmdir,
    .rename = pc_rename,
    .link = pc_link,
    .chmod = pc_chmod,
    .chown = pc_chown,
    .utimens = pc_utimens,
    .statfs = pc_statfs,
    .flush = pc_flush,
};

/* ---- image load and save ---- */

struct loaded {
    dev_t dev;
    ino_t ino;
    struct node *node;
};
static struct loaded *g_loaded;
static size_t g_nloaded, g_loadcap;

static void load_dir(const char *dirpath, struct node *dir)
{
    DIR *d = opendir(dirpath);
    if (!d)
        die("cannot open %s: %s", dirpath, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dirpath, e->d_name);
        struct stat st;
        if (lstat(p, &st))
            die("cannot stat %s: %s", p, strerror(errno));
        struct node *n = NULL;
        if (S_ISDIR(st.st_mode)) {
            n = new_node(1, S_IFDIR | (st.st_mode & 07777));
            load_dir(p, n);
        } else if (S_ISREG(st.st_mode)) {
            for (size_t i = 0; i < g_nloaded; i++)
                if (g_loaded[i].dev == st.st_dev && g_loaded[i].ino == st.st_ino)
                    n = g_loaded[i].node;
            if (!n) {
                n = new_node(0, S_IFREG | (st.st_mode & 07777));
                FILE *f = fopen(p, "rb");
                if (!f)
                    die("cannot open %s: %s", p, strerror(errno));
                char *buf = xcalloc(1, 1 << 16);
                size_t k;
                uint64_t off = 0;
                while ((k = fread(buf, 1, 1 << 16, f)) > 0) {
                    vwrite(n, buf, k, off);
                    off += k;
                }
                free(buf);
                fclose(f);
                vtruncate(n, (uint64_t)st.st_size);
                make_durable(n);
                if (g_nloaded == g_loadcap) {
                    g_loadcap = g_loadcap ? g_loadcap * 2 : 64;
                    g_loaded = realloc(g_loaded, g_loadcap * sizeof *g_loaded);
                }
                g_loaded[g_nloaded++] = (struct loaded){st.st_dev, st.st_ino, n};
            }
        } else {
            continue;
        }
        tadd(&dir->vt, e->d_name, n);
        n->vlinks++;
    }
    closedir(d);
    dir_make_durable(dir);
}

static void save_file(const char *p, struct node *n, int durable)
{
    if (n->saved_path) {
        if (link(n->saved_path, p))
            die("cannot link %s to %s: %s", p, n->saved_path, strerror(errno));
        return;
    }
    FILE *f = fopen(p, "wb");
    if (!f)
        die("cannot create %s: %s", p, strerror(errno));
    uint8_t **pages = durable ? n->dp : n->vp;
    size_t cap = durable ? n->dcap : n->vcap;
    uint64_t size = durable ? n->dsize : n->vsize;
    static const uint8_t zero[PAGE];
    for (size_t i = 0; (uint64_t)i * PAGE < size; i++) {
        size_t k = size - (uint64_t)i * PAGE < PAGE ? (size_t)(size - (uint64_t)i * PAGE) : PAGE;
        const uint8_t *src = i < cap && pages[i] ? pages[i] : zero;
        if (fwrite(src, 1, k, f) != k)
            die("cannot write %s: %s", p, strerror(errno));
    }
    if (fclose(f))
        die("cannot write %s: %s", p, strerror(errno));
    chmod(p, n->mode & 07777);
    n->saved_path = strdup(p);
}

static void save_dir(const char *p, struct node *dir, int durable)
{
    if (mkdir(p, 0755) && errno != EEXIST)
        die("cannot create %s: %s", p, strerror(errno));
    struct table *t = durable ? &dir->dt : &dir->vt;
    for (size_t i = 0; i < t->n; i++) {
        char c[PATH_MAX];
        snprintf(c, sizeof c, "%s/%s", p, t->e[i].name);
        if (t->e[i].node->is_dir)
            save_dir(c, t->e[i].node, durable);
        else
            save_file(c, t->e[i].node, durable);
    }
}

int main(int argc, char *argv[])
{
    /* our options first, then libfuse's */
    char **fargv = xcalloc((size_t)argc + 1, sizeof *fargv);
    int fargc = 0;
    fargv[fargc++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--image") && i + 1 < argc)
            g_image = argv[++i];
        else if (!strcmp(argv[i], "--save") && i + 1 < argc)
            g_save = argv[++i];
        else if (!strcmp(argv[i], "--lie-fsync") && i + 1 < argc)
            g_lie_suffix = argv[++i];
        else if (!strcmp(argv[i], "--keep-unsynced-one-in") && i + 1 < argc)
            g_keep_one_in = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            g_rng = strtoull(argv[++i], NULL, 10) * 0x9E3779B97F4A7C15u | 1;
        else
            fargv[fargc++] = argv[i];
    }
    if (!g_save)
        die("usage: powercutfs [--image DIR] --save DIR MOUNTPOINT [-f] [libfuse options]");
    /* libfuse changes the working directory to / */
    static char image_abs[PATH_MAX], save_abs[PATH_MAX];
    if (g_image && !realpath(g_image, image_abs))
        die("--image %s: %s", g_image, strerror(errno));
    if (g_image)
        g_image = image_abs;
    if (g_save[0] != '/') {
        if (!getcwd(save_abs, sizeof save_abs) || strlen(save_abs) + strlen(g_save) + 2 > sizeof save_abs)
            die("--save %s: path too long", g_save);
        strcat(save_abs, "/");
        strcat(save_abs, g_save);
        g_save = save_abs;
    }
    g_root = new_node(1, S_IFDIR | 0755);
    g_root->ino = 1;
    g_root->vlinks = g_root->dlinks = 1;
    if (g_image)
        load_dir(g_image, g_root);
    int rc = fuse_main(fargc, fargv, &ops, NULL);
    /* unmounted: save what survives */
    pthread_mutex_lock(&g_lock);
    int cut = g_frozen;
    save_dir(g_save, g_root, cut);
    fprintf(stderr, "powercutfs: %s; saved the %s state to %s; requests refused after the cut: %llu\n",
            cut ? "power cut" : "clean unmount", cut ? "durable" : "whole", g_save,
            (unsigned long long)g_refused_after_cut);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
