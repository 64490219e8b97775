/* host_store.c — segments of decoded broadcasts shared by the processes of
 * a host: writing and publishing them, mapping them (their format and
 * checks are host_segment.c's), the per-key lock across processes and the
 * records of writes that found no room, leases and eviction.  See
 * host_store.h for the files and the protocol, cache.h for the guarantees.
 *
 * Every file is reached through the directory's descriptor (openat and
 * friends), opened once at open after its checks, so that the directory
 * cannot be swapped for another behind the store's back. */
#define _GNU_SOURCE
#include "cache/broadcast_part.h"
#include "cache/host_segment.h"
#include "cache/host_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "codec/helpers.h"
#include "xchg/writer.h"

#define NAME_SIZE 48 /* 32 hex digits, a suffix, the NUL */
_Static_assert(32 + sizeof ".lock" <= NAME_SIZE, "a key's file names fit NAME_SIZE");
#define FAILURE_MAGIC "XCHGROOM"

struct host_store {
  atomic_long refs; /* the opener and every live mapping */
  atomic_long evictions;
  int dirfd;
  int64_t retain_bytes, retain_ms;
};

/* A live mapping: what its release needs. */
typedef struct lease {
  host_store *store;
  int fd; /* holds LOCK_SH */
  char name[NAME_SIZE];
} lease;

/* A failed write's record, the content of its key's lock file (whose
 * mtime says when): the room the segment needs, at least. */
typedef struct failure_record {
  char magic[8];
  uint64_t needed;
} failure_record;

void (*host_store_hook)(host_hook_point point, const char *file);

static void hook(host_hook_point point, const char *file) {
  if (host_store_hook) host_store_hook(point, file);
}

/* ---- names ------------------------------------------------------------------ */

/* "<32 hex digits of two hashes of key><suffix>": the key itself is in the
 * segment, so a collision is caught when the segment is opened. */
static void key_file(const char *key, const char *suffix, char out[NAME_SIZE]) {
  size_t n = strlen(key);
  uint64_t a = fnv1a(key, n, FNV1A_BASIS);
  uint64_t b = fnv1a(key, n, 0x84222325cbf29ce4ull ^ n);
  snprintf(out, NAME_SIZE, "%016llx%016llx%s", (unsigned long long)a, (unsigned long long)b,
           suffix);
}

/* The name of another file of the same key as `name` (which ends in one of
 * the suffixes after its 32 hex digits). */
static void sibling_file(const char *name, const char *suffix, char out[NAME_SIZE]) {
  snprintf(out, NAME_SIZE, "%.32s%s", name, suffix);
}

/* Whether name is one key_file could have made with suffix: 32 lowercase
 * hex digits, then suffix (the scans remove no other file). */
static int has_suffix(const char *name, const char *suffix) {
  size_t n = strlen(name), m = strlen(suffix);
  if (n != 32 + m || strcmp(name + 32, suffix) != 0) return 0;
  for (size_t i = 0; i < 32; i++)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return 0;
  return 1;
}

/* ---- the store -------------------------------------------------------------- */

static xchg_status check_owned_private(const struct stat *st, const char *what, const char *name,
                                       xchg_error *err) {
  if (st->st_uid != geteuid())
    return xchg_errorf(err, XCHG_EINVAL,
                       "host store: %s '%s' is owned by uid %u, not by this "
                       "user (uid %u): refused",
                       what, name, (unsigned)st->st_uid, (unsigned)geteuid());
  return XCHG_OK;
}

xchg_status host_store_open(const char *dir, int64_t retain_bytes, int64_t retain_ms,
                            host_store **out, xchg_error *err) {
  *out = NULL;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return xchg_errorf(err, XCHG_EIO, "host store: cannot create directory '%s': %s", dir,
                       strerror(errno));
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return xchg_errorf(err, XCHG_EIO, "host store: cannot open directory '%s': %s", dir,
                       strerror(errno));
  struct stat st;
  xchg_status rc = XCHG_OK;
  if (fstat(fd, &st) != 0)
    rc = xchg_errorf(err, XCHG_EIO, "host store: cannot stat '%s': %s", dir, strerror(errno));
  else if ((rc = check_owned_private(&st, "directory", dir, err)) != XCHG_OK) {
  } else if (st.st_mode & (S_IWGRP | S_IWOTH))
    rc = xchg_errorf(err, XCHG_EINVAL,
                     "host store: directory '%s' is writable by its group or "
                     "by others (mode %03o): refused",
                     dir, (unsigned)(st.st_mode & 0777));
  host_store *s = rc == XCHG_OK ? calloc(1, sizeof *s) : NULL;
  if (rc == XCHG_OK && !s) rc = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (rc != XCHG_OK) {
    close(fd);
    return rc;
  }
  atomic_init(&s->refs, 1);
  atomic_init(&s->evictions, 0);
  s->dirfd = fd;
  s->retain_bytes = retain_bytes;
  s->retain_ms = retain_ms;
  *out = s;
  return XCHG_OK;
}

static void store_unref(host_store *s) {
  if (atomic_fetch_sub(&s->refs, 1) != 1) return;
  close(s->dirfd);
  free(s);
}

void host_store_close(host_store *s) {
  if (s) store_unref(s);
}

/* ---- mapping ------------------------------------------------------------------ */

/* Whether fd still is the file `name` (a file may be unlinked, and a lock
 * file created again, by another process meanwhile). */
static int still_linked(int dirfd, int fd, const char *name) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Removes the segment `name`, open as fd, if no other process holds it:
 * LOCK_EX is granted only then (fd's own LOCK_SH, if any, is given up
 * for it), and the name is unlinked only if it still is fd's file.  The
 * caller closes fd. */
static int remove_if_unheld(host_store *s, int fd, const char *name) {
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    hook(HOST_HOOK_REMOVE_HELD, name);
    return 0;
  }
  hook(HOST_HOOK_REMOVING, name);
  if (!still_linked(s->dirfd, fd, name) || unlinkat(s->dirfd, name, 0) != 0) return 0;
  atomic_fetch_add(&s->evictions, 1);
  return 1;
}

/* At retention 0 nothing is kept that nobody holds. */
static int retains_nothing(const host_store *s) { return s->retain_bytes <= 0; }

/* The release of a mapping: the time of the last release (for retain_ms,
 * best effort), then, at retention 0, the segment's removal if this was
 * its last lease on the host.  No scan: other segments wait for the next
 * store operation. */
static void unmap_release(void *ctx, const void *data, size_t size) {
  lease *l = ctx;
  munmap((void *)data, size);
  futimens(l->fd, NULL);
  if (retains_nothing(l->store)) remove_if_unheld(l->store, l->fd, l->name);
  close(l->fd);
  store_unref(l->store);
  free(l);
}

/* Checks an open segment file before it is mapped: a regular file of this
 * user, 0600, big enough for a header. */
static xchg_status check_segment_file(const struct stat *st, const char *name, xchg_error *err) {
  xchg_status rc = check_owned_private(st, "segment", name, err);
  if (rc != XCHG_OK) return rc;
  if (!S_ISREG(st->st_mode) || (st->st_mode & 0777) != 0600)
    return xchg_errorf(err, XCHG_EINVAL,
                       "host store: segment '%s' is not a regular file of mode "
                       "600 (mode %o): refused",
                       name, (unsigned)st->st_mode);
  if (st->st_size < HEADER_FIXED)
    return xchg_errorf(err, XCHG_EFORMAT, "host segment %s: %lld bytes, too short for a header",
                       name, (long long)st->st_size);
  return XCHG_OK;
}

/* What map_segment found when it mapped nothing. */
typedef enum segment_state { SEGMENT_MAPPED, SEGMENT_ABSENT, SEGMENT_REMOVING } segment_state;

/* Maps the published segment of key with a lease.  *state says whether it
 * was mapped, is absent, or is being removed by another process (which
 * holds LOCK_EX on it and is about to unlink it); XCHG_OK then. */
static xchg_status map_segment(host_store *s, const char *key, host_segment **out,
                               segment_state *state, xchg_error *err) {
  char name[NAME_SIZE];
  key_file(key, ".seg", name);
  *out = NULL;
  *state = SEGMENT_ABSENT;
  /* O_NONBLOCK: a FIFO at the name would block the open for good, before
   * check_segment_file could refuse it (no effect on a regular file) */
  int fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT
               ? XCHG_OK
               : xchg_errorf(err, XCHG_EIO, "host segment %s: %s", name, strerror(errno));
  hook(HOST_HOOK_MAP, name);
  struct stat st;
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
    close(fd);
    *state = SEGMENT_REMOVING;
    return XCHG_OK;
  }
  if (fstat(fd, &st) != 0 || st.st_nlink == 0) {
    close(fd); /* removed meanwhile */
    return XCHG_OK;
  }
  xchg_status rc = check_segment_file(&st, name, err);
  size_t size = (size_t)st.st_size;
  void *map = rc == XCHG_OK ? mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (rc == XCHG_OK && map == MAP_FAILED)
    rc = xchg_errorf(err, XCHG_EIO, "host segment %s: cannot map: %s", name, strerror(errno));
  lease *l = rc == XCHG_OK ? malloc(sizeof *l) : NULL;
  if (rc == XCHG_OK && !l) rc = xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  if (rc != XCHG_OK) {
    if (map != MAP_FAILED) munmap(map, size);
    close(fd);
    return rc;
  }
  l->store = s;
  l->fd = fd;
  snprintf(l->name, NAME_SIZE, "%s", name);
  atomic_fetch_add(&s->refs, 1);
  /* From here on the mapping's release ends the lease. */
  xchg_buf *bytes = xchg_buf_wrap(map, size, unmap_release, l);
  if (!bytes) {
    unmap_release(l, map, size);
    return xchg_errorf(err, XCHG_ENOMEM, "out of memory");
  }
  rc = host_segment_open(bytes, key, name, out, err);
  xchg_buf_unref(bytes);
  if (rc == XCHG_OK) *state = SEGMENT_MAPPED;
  return rc;
}

/* ---- the key's lock --------------------------------------------------------- */

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

/* A polling wait: pauses of 1 ms growing to 10, asking cancel every
 * wait_check_ms. */
typedef struct poller {
  int64_t next_check, pause;
} poller;

static poller poller_start(const host_request *req) {
  return (poller){now_ms() + req->wait_check_ms, 1};
}

/* Pauses once; returns 1 when the acquirer was cancelled. */
static int poll_pause(poller *p, const host_request *req) {
  sleep_ms(p->pause);
  if (p->pause < 10) p->pause++;
  if (now_ms() < p->next_check) return 0;
  p->next_check = now_ms() + req->wait_check_ms;
  return req->cancel && req->cancel(req->cancel_ctx);
}

static xchg_status cancelled_waiting(const host_request *req, xchg_error *err) {
  return xchg_errorf(err, XCHG_ECANCELLED,
                     "broadcast '%s': cancelled while waiting for "
                     "another process's decode",
                     req->key);
}

/* Only files the store could have made are ever removed (or written). */
static int is_own_file(const struct stat *st) {
  return S_ISREG(st->st_mode) && st->st_uid == geteuid() && (st->st_mode & 0777) == 0600;
}

/* Opens the lock file `name`, made 0600 when missing (whatever the umask,
 * as segments are); one that is there already must be one the store could
 * have made, since its holder unlinks it: else -1 with errno EPERM, and
 * the file is left alone. */
static int open_lock_file(int dirfd, const char *name) {
  for (;;) {
    int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      if (fchmod(fd, 0600) == 0) return fd;
      int e = errno;
      unlinkat(dirfd, name, 0); /* made just now, and not locked yet */
      close(fd);
      errno = e;
      return -1;
    }
    if (errno != EEXIST) return -1;
    if ((fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) < 0) {
      if (errno == ENOENT) continue; /* unlinked by its holder meanwhile */
      return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && is_own_file(&st)) return fd;
    close(fd);
    errno = EPERM;
    return -1;
  }
}

/* Takes LOCK_EX without blocking on the lock file `name`, through *fd
 * (opened when -1, and kept open while another holds the lock, so that a
 * waiter polls with one flock per try).  Returns 1 when taken, 0 when
 * another holds it, -1 on failure (errno set; *fd closed). */
static int try_lock_fd(int dirfd, const char *name, int *fd) {
  for (;;) {
    if (*fd < 0 && (*fd = open_lock_file(dirfd, name)) < 0) return -1;
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) return 0;
      int e = errno;
      close(*fd);
      *fd = -1;
      errno = e;
      return -1;
    }
    if (still_linked(dirfd, *fd, name)) return 1;
    close(*fd); /* its holder unlinked the one we waited on: lock the new one */
    *fd = -1;
  }
}

/* Takes LOCK_EX on the lock file `name` without blocking; -1 when another
 * holds it or on failure. */
static int try_lock(int dirfd, const char *name) {
  int fd = -1;
  if (try_lock_fd(dirfd, name, &fd) == 1) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

/* Lets go of the key's lock, unlinking its file first: while held, the
 * name is the holder's (nobody else unlinks a held lock, and nobody makes
 * a new one while it exists); whoever waits on the unlinked file starts
 * over on a new one. */
static void unlock_key(host_store *s, int fd, const char *name) {
  unlinkat(s->dirfd, name, 0);
  close(fd);
}

/* ---- failure records -------------------------------------------------------- */

static int64_t mtime_ns(const struct stat *st) {
  return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static int64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The room recorded in the lock file fd by a write that failed less than
 * HOST_FAILURE_MEMORY_MS ago; 0 when there is no such record. */
static uint64_t recorded_need(int fd) {
  failure_record r;
  struct stat st;
  if (pread(fd, &r, sizeof r, 0) != (ssize_t)sizeof r || memcmp(r.magic, FAILURE_MAGIC, 8) != 0 ||
      fstat(fd, &st) != 0)
    return 0;
  return realtime_ns() - mtime_ns(&st) < (int64_t)HOST_FAILURE_MEMORY_MS * 1000000 ? r.needed : 0;
}

/* The bytes this user may still write on the store's file system; -1 when
 * statvfs cannot say. */
static int64_t free_bytes(const host_store *s) {
  struct statvfs v;
  if (fstatvfs(s->dirfd, &v) != 0) return -1;
  return (int64_t)v.f_bavail * (int64_t)v.f_frsize;
}

/* Whether the file system has less room than `needed` now. */
static int lacks_room(const host_store *s, uint64_t needed) {
  int64_t avail = free_bytes(s);
  return avail >= 0 && (uint64_t)avail < needed;
}

/* Whether the lock file fd records a recent failure for lack of a room
 * the file system still lacks (why then says so). */
static int still_no_room(const host_store *s, int fd, const char *key, xchg_error *why) {
  uint64_t needed = recorded_need(fd);
  if (needed == 0 || !lacks_room(s, needed)) return 0;
  xchg_errorf(why, XCHG_EIO,
              "host store: writing the segment of '%s' failed for lack of room "
              "less than %d s ago; it needs at least %llu bytes and %lld are free: not tried "
              "again",
              key, HOST_FAILURE_MEMORY_MS / 1000, (unsigned long long)needed,
              (long long)free_bytes(s));
  return 1;
}

/* Records in the held lock file fd that the key's segment needs at least
 * `needed` bytes. */
static void record_failure(int fd, uint64_t needed) {
  failure_record r;
  memcpy(r.magic, FAILURE_MAGIC, 8);
  r.needed = needed;
  if (pwrite(fd, &r, sizeof r, 0) != (ssize_t)sizeof r)
    return; /* no record (a short one is none): the next process tries */
}

/* Takes the key's lock, waiting (polling, asking cancel every
 * wait_check_ms) while another process holds it.  A holder that dies
 * releases it with its descriptors.  *fd_out is -1 (why says why) when
 * the lock cannot be taken, or when the lock file records a failure for
 * lack of room that the file system still lacks: the acquirer then falls
 * back at once, whether it took the lock or waits for it. */
static xchg_status lock_key(host_store *s, const host_request *req, const char *name, int *fd_out,
                            int *waited, xchg_error *why, xchg_error *err) {
  poller p = poller_start(req);
  int fd = -1;
  *fd_out = -1;
  for (;;) {
    int taken = try_lock_fd(s->dirfd, name, &fd);
    if (taken < 0 && errno == EPERM) {
      xchg_errorf(why, XCHG_EIO,
                  "host store: %s is not a file the store made (not a regular file of "
                  "this user, mode 600): left alone",
                  name);
      return XCHG_OK;
    }
    if (taken < 0) {
      xchg_errorf(why, XCHG_EIO, "host store: cannot lock %s: %s", name, strerror(errno));
      return XCHG_OK;
    }
    if (still_no_room(s, fd, req->key, why)) {
      close(fd);
      return XCHG_OK;
    }
    if (taken) {
      *fd_out = fd;
      return XCHG_OK;
    }
    *waited = 1;
    if (poll_pause(&p, req)) {
      close(fd);
      return cancelled_waiting(req, err);
    }
  }
}

/* ---- writing a segment ---------------------------------------------------------- */

typedef struct segment_writer {
  int fd;
  const char *name;
  uint64_t at;  /* where the next part starts */
  uint64_t end; /* where the last part ends */
  uint8_t *header;
  size_t header_bytes;
  uint64_t projected; /* the segment's size, when a part would not fit */
  xchg_source *raw;   /* the encoded bytes of the part being written */
} segment_writer;

/* Whether the rest of the part being written will not fit (why then says
 * so, and w->projected what the segment needs at least): projected from
 * the bytes written for the share of its encoded bytes read, once an
 * eighth of them is, it exceeds the free space.  written is the part's
 * bytes so far. */
static int part_will_not_fit(segment_writer *w, const host_request *req, int64_t part,
                             uint64_t written, xchg_error *why) {
  int64_t read = (int64_t)xchg_source_position(w->raw), size = xchg_source_size(w->raw);
  struct statvfs v;
  if (size <= 0 || read <= 0 || read < size / 8 || fstatvfs(w->fd, &v) != 0) return 0;
  double rest = (double)written * (double)(size - read) / (double)read;
  double avail = (double)v.f_bavail * (double)v.f_frsize;
  if (rest <= avail) return 0;
  w->projected = w->at + written + (uint64_t)rest;
  xchg_errorf(why, XCHG_EIO,
              "no room: after %lld of part %lld's %lld bytes, its rest needs "
              "about %.0f bytes more and %.0f are free (stopped early)",
              (long long)read, (long long)part, (long long)size, rest, avail);
  return 1;
}

/* Decodes part i from the broadcast's bytes and writes it as an
 * uncompressed, 64-byte aligned IPC stream at w->at, entering it in the
 * part table.  A failure of the bytes is returned as an error; a failure
 * of the file goes to why, with its status in *write_failed. */
static xchg_status write_part(segment_writer *w, const host_request *req, int64_t i,
                              xchg_status *write_failed, xchg_error *why, xchg_error *err) {
  xchg_ipc_reader *r = NULL;
  xchg_ipc_writer *wr = NULL;
  struct ArrowSchema schema = {0};
  xchg_status st =
      broadcast_open_part(req->bytes, i, req->read, req->cancel, req->cancel_ctx, &r, &w->raw, err);
  if (st == XCHG_OK) st = xchg_ipc_reader_schema(r, &schema, err);
  if (st == XCHG_OK && lseek(w->fd, (off_t)w->at, SEEK_SET) < 0)
    *write_failed =
        xchg_errorf(why, XCHG_EIO, "host segment %s: seek: %s", w->name, strerror(errno));
  xchg_ipc_write_options wo;
  xchg_ipc_write_options_init(&wo);
  wo.alignment = PART_ALIGN;
  if (st == XCHG_OK && !*write_failed)
    *write_failed = xchg_ipc_writer_open_fd(&schema, &wo, w->fd, &wr, why);
  while (st == XCHG_OK && !*write_failed) {
    struct ArrowArray batch;
    if ((st = xchg_ipc_reader_next(r, &batch, err)) != XCHG_OK || !batch.release) break;
    *write_failed = xchg_ipc_writer_write(wr, &batch, why);
    if (!*write_failed &&
        part_will_not_fit(w, req, i, (uint64_t)xchg_ipc_writer_bytes_written(wr), why))
      *write_failed = XCHG_EIO;
    batch.release(&batch);
  }
  if (st == XCHG_OK && !*write_failed && (st = broadcast_part_check_end(r, err)) != XCHG_OK)
    xchg_error_prefix(err, "part %lld: ", (long long)i);
  if (st == XCHG_OK && !*write_failed) *write_failed = xchg_ipc_writer_finish(wr, why);
  if (wr && *write_failed) xchg_error_prefix(why, "host segment %s: ", w->name);
  if (st == XCHG_OK && !*write_failed) {
    uint64_t len = (uint64_t)xchg_ipc_writer_bytes_written(wr);
    uint8_t *entry =
        w->header + sizeof(segment_header) + segment_round_up(strlen(req->key)) + 16 * i;
    memcpy(entry, &w->at, 8);
    memcpy(entry + 8, &len, 8);
    w->end = w->at + len;
    w->at = segment_round_up(w->end);
  }
  if (schema.release) schema.release(&schema);
  xchg_ipc_writer_free(wr);
  xchg_ipc_reader_free(r);
  return st;
}

/* Fills the fixed header for a file whose last part ends at `end`. */
static void finish_header(segment_writer *w, const host_request *req, uint64_t end) {
  segment_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, SEGMENT_MAGIC, 8);
  h.size = end;
  h.header_bytes = w->header_bytes;
  h.key_len = strlen(req->key);
  h.n_parts = (uint64_t)req->bytes->n_parts;
  memcpy(w->header, &h, sizeof h);
  memcpy(w->header + sizeof h, req->key, strlen(req->key));
  h.header_hash = segment_header_hash(w->header, w->header_bytes);
  memcpy(w->header, &h, sizeof h);
}

static int write_all_at(int fd, const void *data, size_t n, off_t at) {
  const uint8_t *p = data;
  while (n > 0) {
    ssize_t k = pwrite(fd, p, n, at);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
    at += k;
  }
  return 0;
}

/* The room a temporary that could not be written needed at least: what it
 * took, and a block more. */
static uint64_t room_needed(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  uint64_t used = (uint64_t)st.st_blocks * 512;
  return (used > (uint64_t)st.st_size ? used : (uint64_t)st.st_size) + (uint64_t)st.st_blksize;
}

/* Removes what a dead writer left under the temporary name tmp (the key's
 * lock is held: no live writer has it); returns 0, why saying so, when a
 * file is there that the store could not have made, which is left alone. */
static int remove_dead_temporary(host_store *s, const char *tmp, xchg_error *why) {
  struct stat st;
  if (fstatat(s->dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) != 0) return 1;
  if (!is_own_file(&st)) {
    xchg_errorf(why, XCHG_EIO,
                "host store: %s is not a file the store made (not a regular file of this "
                "user, mode 600): left alone",
                tmp);
    return 0;
  }
  unlinkat(s->dirfd, tmp, 0);
  return 1;
}

/* Publishes the temporary tmp as seg, never over an existing file: by a
 * rename that cannot replace (*moved set), so that no name of the
 * temporary is left behind even if the process dies right after, where
 * the file system has one; else by a link, the caller unlinking tmp.  A
 * temporary left linked to a published segment kept its bytes (/dev/shm's
 * memory) after the segment's removal, until a directory scan or the
 * key's next write, which retention 0 may never bring. */
static int publish(int dirfd, const char *tmp, const char *seg, int *moved) {
  *moved = 0;
#ifdef RENAME_NOREPLACE
  if (renameat2(dirfd, tmp, dirfd, seg, RENAME_NOREPLACE) == 0) {
    *moved = 1;
    return 0;
  }
  if (errno != EINVAL && errno != ENOSYS) return -1; /* EEXIST... */
#endif
  return linkat(dirfd, tmp, dirfd, seg, 0) == 0 ? 0 : -1;
}

/* Writes the key's segment under its temporary name and publishes it
 * (the lock held; never over an existing file): nobody ever opens a
 * partial segment.  What is left of a dead writer's temporary is replaced.
 * The temporary holds LOCK_SH from its creation, so that the published
 * segment is leased before anyone can see it: on success *leased_fd is
 * that descriptor (the caller closes it once it has mapped the segment).
 * When the file cannot be written, *needed is the room it needed at least
 * (as far as it was written, or as projected when it stopped early), and
 * *write_failed the failure's status. */
static xchg_status write_segment(host_store *s, const host_request *req, xchg_status *write_failed,
                                 uint64_t *needed, int *leased_fd, xchg_error *why,
                                 xchg_error *err) {
  char tmp[NAME_SIZE], seg[NAME_SIZE];
  key_file(req->key, ".tmp", tmp);
  key_file(req->key, ".seg", seg);
  hook(HOST_HOOK_WRITE, seg);
  if (!remove_dead_temporary(s, tmp, why)) {
    *write_failed = XCHG_EIO;
    return XCHG_OK;
  }
  segment_writer w = {
      -1, tmp, 0, 0, NULL, segment_header_size(strlen(req->key), (uint64_t)req->bytes->n_parts),
      0,  NULL};
  w.at = w.end = w.header_bytes;
  w.fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (w.fd < 0 || fchmod(w.fd, 0600) != 0 || flock(w.fd, LOCK_SH) != 0 ||
      !(w.header = calloc(1, w.header_bytes)))
    *write_failed =
        xchg_errorf(why, XCHG_EIO, "host segment %s: cannot create: %s", tmp, strerror(errno));
  xchg_status st = XCHG_OK;
  int moved = 0;
  for (int64_t i = 0; i < req->bytes->n_parts && st == XCHG_OK && !*write_failed; i++)
    st = write_part(&w, req, i, write_failed, why, err);
  if (st == XCHG_OK && !*write_failed) {
    finish_header(&w, req, w.end);
    if (ftruncate(w.fd, (off_t)w.end) != 0 ||
        write_all_at(w.fd, w.header, w.header_bytes, 0) != 0 ||
        publish(s->dirfd, tmp, seg, &moved) != 0)
      *write_failed = xchg_errorf(why, XCHG_EIO, "host segment %s: cannot write or publish: %s",
                                  tmp, strerror(errno));
  }
  if (st == XCHG_OK && !*write_failed) hook(HOST_HOOK_PUBLISHED, seg);
  if (w.fd >= 0 && *write_failed) *needed = w.projected ? w.projected : room_needed(w.fd);
  if (w.fd >= 0 && !moved) unlinkat(s->dirfd, tmp, 0); /* ours: linked as seg, or failed */
  if (w.fd >= 0 && (st != XCHG_OK || *write_failed))
    close(w.fd);
  else
    *leased_fd = w.fd;
  free(w.header);
  return st;
}

/* ---- obtain ---------------------------------------------------------------------- */

/* Maps the key's segment with its lock held, waiting while another
 * process removes it (it is a few calls from unlinking it).  Returns 1
 * when there is none to map, so that this process writes it. */
static int map_under_lock(host_store *s, const host_request *req, host_segment **out,
                          xchg_status *st, host_outcome *outcome, xchg_error *why,
                          xchg_error *err) {
  poller p = poller_start(req);
  for (;;) {
    segment_state state;
    if ((outcome->failure = map_segment(s, req->key, out, &state, why)) != XCHG_OK)
      return 0; /* refused: fall back */
    if (state != SEGMENT_REMOVING) return state == SEGMENT_ABSENT;
    if (poll_pause(&p, req)) {
      *st = cancelled_waiting(req, err);
      return 0;
    }
  }
}

xchg_status host_store_obtain(host_store *s, const host_request *req, host_segment **out,
                              host_outcome *outcome, xchg_error *why, xchg_error *err) {
  memset(outcome, 0, sizeof *outcome);
  *out = NULL;
  host_store_evict(s);
  segment_state state;
  if ((outcome->failure = map_segment(s, req->key, out, &state, why)) != XCHG_OK ||
      state == SEGMENT_MAPPED)
    return XCHG_OK;
  char lock_name[NAME_SIZE];
  key_file(req->key, ".lock", lock_name);
  int lock_fd;
  xchg_status st = lock_key(s, req, lock_name, &lock_fd, &outcome->waited, why, err);
  if (st == XCHG_OK && lock_fd < 0) outcome->failure = XCHG_EIO; /* why says which */
  if (st != XCHG_OK || lock_fd < 0) return st;
  /* Whoever held the lock may have published it meanwhile. */
  if (!map_under_lock(s, req, out, &st, outcome, why, err)) {
    unlock_key(s, lock_fd, lock_name);
    return st;
  }
  xchg_status write_failed = XCHG_OK;
  int leased_fd = -1;
  uint64_t needed = 0;
  outcome->attempted = 1;
  st = write_segment(s, req, &write_failed, &needed, &leased_fd, why, err);
  if (st == XCHG_OK) outcome->failure = write_failed;
  if (st == XCHG_OK && !write_failed) {
    outcome->decoded = 1;
    outcome->failure = map_segment(s, req->key, out, &state, why);
    if (outcome->failure == XCHG_OK && state != SEGMENT_MAPPED)
      outcome->failure = xchg_errorf(
          why, XCHG_EIO, "host store: the segment of '%s' vanished after publishing", req->key);
    close(leased_fd);
  } else if (st == XCHG_OK && lacks_room(s, needed)) {
    /* Remembered for the others (those waiting for this lock included),
     * who fall back at once while the room is lacking. */
    record_failure(lock_fd, needed);
    hook(HOST_HOOK_WRITE_FAILED, lock_name);
    close(lock_fd);
    return st;
  }
  unlock_key(s, lock_fd, lock_name); /* nothing published: nothing left behind */
  return st;
}

/* ---- eviction ------------------------------------------------------------------- */

typedef struct seg_info {
  char name[NAME_SIZE];
  int64_t size;
  int64_t mtime_ns;
} seg_info;

static int older_first(const void *a, const void *b) {
  const seg_info *x = a, *y = b;
  return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

/* Removes the segment `name` if nobody holds it. */
static int remove_unheld(host_store *s, const char *name) {
  int fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC); /* map_segment */
  if (fd < 0) return 0;
  hook(HOST_HOOK_REMOVE, name);
  int removed = remove_if_unheld(s, fd, name);
  close(fd);
  return removed;
}

/* What a dead process left of the key of `name` (a temporary or a lock
 * file): when its lock is free, the temporary (its writer died), and the
 * lock file unless it records a recent failure. */
static void remove_left_over(host_store *s, const char *name) {
  char lock_name[NAME_SIZE];
  sibling_file(name, ".lock", lock_name);
  int lock_fd = try_lock(s->dirfd, lock_name);
  if (lock_fd < 0) return;
  if (has_suffix(name, ".tmp")) unlinkat(s->dirfd, name, 0);
  if (recorded_need(lock_fd) == 0) unlinkat(s->dirfd, lock_name, 0);
  close(lock_fd);
}

/* The published segments, oldest release first, and their total size;
 * what dead processes left is removed on the way. */
static seg_info *list_segments(host_store *s, size_t *n, int64_t *total) {
  *n = 0;
  *total = 0;
  hook(HOST_HOOK_SCAN, NULL);
  int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own offset */
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  seg_info *list = NULL;
  size_t cap = 0;
  for (struct dirent *de; (de = readdir(d));) {
    struct stat st;
    if (fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !is_own_file(&st)) continue;
    if (has_suffix(de->d_name, ".tmp") || has_suffix(de->d_name, ".lock"))
      remove_left_over(s, de->d_name);
    if (!has_suffix(de->d_name, ".seg")) continue;
    if (*n == cap) {
      seg_info *grown = realloc(list, (cap = cap ? 2 * cap : 16) * sizeof *list);
      if (!grown) break;
      list = grown;
    }
    seg_info *info = &list[(*n)++];
    /* 32 hex digits and ".seg" (has_suffix), with the NUL: no snprintf,
     * which gcc's -Wformat-truncation takes for up to 255 bytes. */
    memcpy(info->name, de->d_name, 32 + sizeof ".seg");
    info->size = (int64_t)st.st_size;
    info->mtime_ns = mtime_ns(&st);
    *total += info->size;
  }
  closedir(d);
  if (list) qsort(list, *n, sizeof *list, older_first);
  return list;
}

int64_t host_store_evictions(host_store *s) { return atomic_load(&s->evictions); }

void host_store_evict(host_store *s) {
  size_t n;
  int64_t total;
  seg_info *list = list_segments(s, &n, &total);
  int64_t now = realtime_ns();
  for (size_t i = 0; i < n; i++) {
    int too_old = s->retain_ms > 0 && now - list[i].mtime_ns >= s->retain_ms * 1000000;
    /* retaining nothing, an unheld segment of no bytes (not one the store
     * wrote: refused by every process) goes too */
    if (!too_old && !retains_nothing(s) && total <= s->retain_bytes) continue;
    if (remove_unheld(s, list[i].name)) total -= list[i].size;
  }
  free(list);
}
