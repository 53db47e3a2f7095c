/* One folder's digest input, listed and lstat-ed in C (snapshot/prescan.py, "folder_parts").
 *
 * Why compiled: a no-op full checkpoint lists ~1,000 folders and lstats ~51,000 entries;
 * in Python each entry costs a DirEntry and a stat_result object (~40-60 ms of CPU on
 * SPEC's workspace) only to be packed into 36 bytes and hashed. Here the listing
 * (getdents64) and fstatat without following links fill the very bytes prescan.py's
 * Python path hashes, so every stat cache record stays valid.
 *
 * Optional: setup.py builds it with optional=True; prescan.py falls back to Python when
 * it cannot be imported. Everything here is read from disk: names are any bytes up to
 * NAME_MAX, a folder may hold any number of entries (memory grows with its listing only),
 * and entries may vanish or change between the listing and their fstatat.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a file's part: "<QqqQI" of (size, mtime_ns, ctime_ns, ino, mode), little-endian */
#define FILE_PART 36
#define DIR_PART 'd'

typedef struct {
    char *names;       /* every name, each followed by a NUL */
    size_t names_len;  /* bytes used in names */
    size_t names_cap;
    size_t *starts;    /* where each name begins in names */
    unsigned char *is_dir;
    size_t count;
    size_t cap;
} Listing;

static void listing_free(Listing *l) {
    free(l->names);
    free(l->starts);
    free(l->is_dir);
}

/* 0, or -1 when memory ran out */
static int listing_add(Listing *l, const char *name, size_t len) {
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof(size_t)) { errno = ENOMEM; return -1; }
        size_t *starts = realloc(l->starts, cap * sizeof(size_t));
        if (starts == NULL) { errno = ENOMEM; return -1; }
        l->starts = starts;
        unsigned char *is_dir = realloc(l->is_dir, cap);
        if (is_dir == NULL) { errno = ENOMEM; return -1; }
        l->is_dir = is_dir;
        l->cap = cap;
    }
    if (len + 1 > l->names_cap - l->names_len) {
        size_t cap = l->names_cap ? l->names_cap : 4096;
        while (len + 1 > cap - l->names_len) {
            if (cap > SIZE_MAX / 2) { errno = ENOMEM; return -1; }
            cap *= 2;
        }
        char *names = realloc(l->names, cap);
        if (names == NULL) { errno = ENOMEM; return -1; }
        l->names = names;
        l->names_cap = cap;
    }
    l->starts[l->count] = l->names_len;
    memcpy(l->names + l->names_len, name, len);
    l->names[l->names_len + len] = '\0';
    l->names_len += len + 1;
    l->is_dir[l->count] = 0;
    l->count++;
    return 0;
}

/* The kernel's own record of one folder entry (linux/dirent.h; glibc's struct dirent64
 * is the same, but not every libc declares it) */
struct kernel_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Every name in the folder of descriptor fd, in the kernel's order, "." and ".." left
 * out, as os.scandir(fd) lists it; fd is rewound after (os.scandir rewinds its duplicate,
 * which shares the offset), so the caller may list it again. Read by getdents64 on fd
 * itself: fdopendir on a duplicate, as scandir does, cost five more system calls a folder
 * (the dup, fdopendir's fstat and two fcntl, the duplicate's close) and a 32 KB buffer
 * made and freed; ~5,000 calls of a no-op checkpoint's ~63,700 on SPEC's workspace
 * (bench/RESULTS.md, branch cold25). 0; -1 when a system call failed (Python's OSError:
 * not verified); -2 when this listing's own memory ran out (MemoryError). */
static int list_folder(int fd, Listing *l) {
    uint64_t buf[4096];  /* 32 KB, glibc's readdir buffer; aligned for the records */
    int failed = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (got < 0) {
            failed = -1;
            break;
        }
        if (got == 0) break;
        for (long at = 0; at < got;) {
            /* each record checked before it is read: its header and its name's NUL
             * inside what the call returned (a record cut short at the buffer's end read
             * past it under ASan; a name without its NUL ran on into the next; redteam28) */
            const size_t head = offsetof(struct kernel_dirent64, d_name);
            const struct kernel_dirent64 *de =
                (const struct kernel_dirent64 *)((const char *)buf + at);
            const char *name = de->d_name;
            const char *end = NULL;
            if ((size_t)(got - at) > head && de->d_reclen > head && de->d_reclen <= got - at)
                end = memchr(name, '\0', de->d_reclen - head);
            if (end == NULL) {
                errno = EIO;  /* not the kernel's records: never seen; not verified */
                failed = -1;
                break;
            }
            at += de->d_reclen;
            if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
                continue;
            if (listing_add(l, name, (size_t)(end - name)) < 0) {
                failed = -2;
                break;
            }
        }
        if (failed) break;
    }
    int saved = errno;
    if (lseek(fd, 0, SEEK_SET) < 0 && failed == 0) return -1;
    errno = saved;
    return failed;
}

static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* a timestamp in nanoseconds, as Python's st_mtime_ns; 0 when it does not fit in the
 * int64 the part holds (Python's struct.pack raises there: such a folder never had a
 * record, so it is not verified). A negative second is taken one up first: in 1677's
 * last second before the limit, seconds * 10**9 alone overflows where the sum does not
 * (Python packs it; refused here, such a folder was listed again at every checkpoint). */
static int time_ns(const struct timespec *t, int64_t *out) {
    int64_t sec = (int64_t)t->tv_sec, nsec = (int64_t)t->tv_nsec, ns;
    if (sec < 0 && nsec > 0) {
        sec += 1;
        nsec -= 1000000000;
    }
    if (__builtin_mul_overflow(sec, (int64_t)1000000000, &ns)) return 0;
    if (__builtin_add_overflow(ns, nsec, &ns)) return 0;
    *out = ns;
    return 1;
}

/* Each entry's part appended to out (FILE_PART bytes a file, one a folder). 0, or -1 when
 * an entry could not be stat-ed or does not fit the part (errno set, or 0). */
static int stat_parts(int fd, Listing *l, unsigned char *out, size_t *used) {
    size_t at = *used;
    for (size_t i = 0; i < l->count; i++) {
        struct stat st;
        if (fstatat(fd, l->names + l->starts[i], &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
        if (S_ISDIR(st.st_mode)) {
            l->is_dir[i] = 1;
            out[at++] = DIR_PART;
            continue;
        }
        int64_t mtime, ctime;
        if (st.st_size < 0 || !time_ns(&st.st_mtim, &mtime) || !time_ns(&st.st_ctim, &ctime)) {
            errno = 0;
            return -1;
        }
        put_u64(out + at, (uint64_t)st.st_size);
        put_u64(out + at + 8, (uint64_t)mtime);
        put_u64(out + at + 16, (uint64_t)ctime);
        put_u64(out + at + 24, (uint64_t)st.st_ino);
        uint32_t mode = (uint32_t)st.st_mode;
        for (int b = 0; b < 4; b++) out[at + 32 + b] = (unsigned char)(mode >> (8 * b));
        at += FILE_PART;
    }
    *used = at;
    return 0;
}

static int is_ignore_file(const char *name) {
    return strcmp(name, ".gitignore") == 0 || strcmp(name, ".turnbackignore") == 0;
}

static PyObject *folder_parts(PyObject *module, PyObject *arg) {
    (void)module;
    int fd = PyObject_AsFileDescriptor(arg);
    if (fd < 0) return NULL;
    Listing l = {0};
    unsigned char *out = NULL;
    size_t used = 0;
    int failed = 0, no_memory = 0;
    Py_BEGIN_ALLOW_THREADS
    int listed = list_folder(fd, &l);
    if (listed < 0) {
        failed = 1;
        no_memory = listed == -2;
    } else {
        /* the names joined by NUL (no NUL after the last), then every part */
        size_t cap = l.names_len;
        if (l.count > (SIZE_MAX - cap) / FILE_PART) {
            failed = no_memory = 1;
        } else {
            cap += l.count * FILE_PART;
            out = malloc(cap ? cap : 1);
            if (out == NULL) {
                failed = no_memory = 1;
            } else {
                if (l.names_len) {
                    memcpy(out, l.names, l.names_len - 1);
                    used = l.names_len - 1;
                }
                if (stat_parts(fd, &l, out, &used) < 0) failed = 1;
            }
        }
    }
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (failed) {
        if (no_memory) PyErr_NoMemory();
        else result = Py_NewRef(Py_None);  /* not verified, as Python's OSError is */
        goto done;
    }
    PyObject *data = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)used);
    PyObject *dirs = PyList_New(0);
    if (data == NULL || dirs == NULL) {
        Py_XDECREF(data);
        Py_XDECREF(dirs);
        goto done;
    }
    int has_ignore = 0;
    for (size_t i = 0; i < l.count; i++) {
        const char *name = l.names + l.starts[i];
        /* any entry by that name, a folder too: as Python's check of the names */
        if (!has_ignore && is_ignore_file(name)) has_ignore = 1;
        if (l.is_dir[i]) {
            PyObject *s = PyUnicode_DecodeFSDefault(name);
            if (s == NULL || PyList_Append(dirs, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(data);
                Py_DECREF(dirs);
                goto done;
            }
            Py_DECREF(s);
        }
    }
    result = Py_BuildValue("(NnNO)", data, (Py_ssize_t)l.count, dirs,
                           has_ignore ? Py_True : Py_False);
done:
    free(out);
    listing_free(&l);
    return result;
}
#endif

static PyMethodDef methods[] = {
#ifdef __linux__
    {"folder_parts", folder_parts, METH_O,
     "folder_parts(fd) -> (digest input, entries, folders' names, has an ignore file) | None\n\n"
     "The folder of descriptor fd listed and lstat-ed: the bytes prescan.py's Python path\n"
     "hashes for its record. None if the folder or an entry could not be read."},
#endif
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_folderparts",
    "One folder's digest input, listed and lstat-ed in C (Linux).", -1, methods,
    NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__folderparts(void) {
    return PyModule_Create(&module_def);
}
