/* dist/store.c - HashStore, FileStore, TCPStore and env:// initialization. */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define CT__STORE_TIMEOUT_MS INT64_C(300000)

/* ---- the key-value map every store keeps (a file store: its file's replay) ---------- */
typedef struct ct__kv {
    char *key;
    uint8_t *val;
    size_t len;
} ct__kv;

typedef struct ct__kvmap {
    ct__kv *e;
    int n, cap;
} ct__kvmap;

static ct__kv *ct__kv_find(const ct__kvmap *m, const char *key)
{
    for (int i = 0; i < m->n; i++) {
        if (strcmp(m->e[i].key, key) == 0) {
            return &m->e[i];
        }
    }
    return NULL;
}

static void ct__kv_clear(ct__kvmap *m)
{
    for (int i = 0; i < m->n; i++) {
        free(m->e[i].key);
        free(m->e[i].val);
    }
    free(m->e);
    memset(m, 0, sizeof *m);
}

/* Sets key (klen bytes, not NUL-terminated) to len bytes of val; false when out of memory. */
static bool ct__kv_set(ct__kvmap *m, const char *key, size_t klen, const void *val, size_t len)
{
    char *k = (char *)malloc(klen + 1);
    uint8_t *v = (uint8_t *)malloc(len ? len : 1);
    if (!k || !v) {
        free(k);
        free(v);
        return false;
    }
    memcpy(k, key, klen);
    k[klen] = '\0';
    memcpy(v, val, len);
    ct__kv *e = ct__kv_find(m, k);
    if (!e && m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 16;
        ct__kv *grown = (ct__kv *)realloc(m->e, sizeof *grown * (size_t)cap);
        if (!grown) {
            free(k);
            free(v);
            return false;
        }
        m->e = grown;
        m->cap = cap;
    }
    if (!e) {
        e = &m->e[m->n++];
        e->key = k;
    } else {
        free(k);
        free(e->val);
    }
    e->val = v;
    e->len = len;
    return true;
}

/* The counter key after adding amount, as decimal text in text (32 bytes); false when key
   holds something else. */
static bool ct__kv_counter(const ct__kvmap *m, const char *key, int64_t amount, char *text)
{
    long long v = 0;
    const ct__kv *e = ct__kv_find(m, key);
    if (e) {
        char buf[32];
        char *end = NULL;
        if (e->len == 0 || e->len >= sizeof buf) {
            return false;
        }
        memcpy(buf, e->val, e->len);
        buf[e->len] = '\0';
        v = strtoll(buf, &end, 10);
        if (*end) {
            return false;
        }
    }
    snprintf(text, 32, "%lld", v + (long long)amount);
    return true;
}

/* ---- the store object ----------------------------------------------------------------- */
typedef enum ct__store_kind { CT__STORE_HASH, CT__STORE_FILE, CT__STORE_TCP } ct__store_kind;

struct ct_store {
    ct__store_kind kind;
    int64_t timeout_ms;
    pthread_mutex_t mu; /* guards map, the file's lock and the client's socket */
    ct__kvmap map;      /* hash store, TCP master; a file store's last replay */
    int fd;             /* file store: the file; TCP client: the socket; else -1 */
    int port;
    /* TCP master */
    int listen_fd;
    pthread_t server;
    bool serving, stop;
    int n_clients;
};

/* TCP requests: one command byte, the key (u32 length, bytes), then for SET the value (u64
   length, bytes) and for ADD the amount (int64). Replies: SET a status byte; GET a found byte,
   then the value (u64 length, bytes); ADD a status byte and the new value (int64). */
enum { CT__TCP_SET = 1, CT__TCP_GET = 2, CT__TCP_ADD = 3 };

static void ct__store_sleep(int ms) { poll(NULL, 0, ms); }

static int64_t ct__store_now_ms(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool ct__io_all(int fd, void *p, size_t n, bool write_)
{
    uint8_t *b = (uint8_t *)p;
    while (n > 0) {
        ssize_t r = write_ ? write(fd, b, n) : read(fd, b, n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return false;
        }
        b += r;
        n -= (size_t)r;
    }
    return true;
}

static ct_store *ct__store_new(ct__store_kind kind, const char *op)
{
    ct_store *s = (ct_store *)calloc(1, sizeof *s);
    if (!s) {
        ct__dist_fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->kind = kind;
    s->timeout_ms = CT__STORE_TIMEOUT_MS;
    s->fd = s->listen_fd = s->port = -1;
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

ct_store *ct_hash_store_new(void) { return ct__store_new(CT__STORE_HASH, "ct_hash_store_new"); }

/* ---- file store: records (u64 key length, key, u64 value length, value) appended ---- */
static bool ct__file_lock(int fd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR) {
            return false;
        }
    }
    return true;
}

/* Rebuilds s->map from the file (a record cut short at the end is ignored). */
static bool ct__file_replay(ct_store *s)
{
    ct__kv_clear(&s->map);
    if (lseek(s->fd, 0, SEEK_SET) != 0) {
        return false;
    }
    for (;;) {
        uint64_t klen = 0, vlen = 0;
        if (!ct__io_all(s->fd, &klen, sizeof klen, false) || klen > (1u << 20)) {
            return true;
        }
        char *k = (char *)malloc((size_t)klen + 1);
        bool ok = k && ct__io_all(s->fd, k, (size_t)klen, false) &&
                  ct__io_all(s->fd, &vlen, sizeof vlen, false) && vlen < ((uint64_t)1 << 40);
        uint8_t *v = ok ? (uint8_t *)malloc((size_t)vlen + 1) : NULL;
        ok = ok && v && ct__io_all(s->fd, v, (size_t)vlen, false) &&
             ct__kv_set(&s->map, k, (size_t)klen, v, (size_t)vlen);
        free(k);
        free(v);
        if (!ok) {
            return true;
        }
    }
}

static bool ct__file_append(ct_store *s, const char *key, const void *val, size_t len)
{
    uint64_t klen = strlen(key), vlen = len;
    return lseek(s->fd, 0, SEEK_END) >= 0 && ct__io_all(s->fd, &klen, sizeof klen, true) &&
           ct__io_all(s->fd, (void *)(uintptr_t)key, (size_t)klen, true) &&
           ct__io_all(s->fd, &vlen, sizeof vlen, true) &&
           ct__io_all(s->fd, (void *)(uintptr_t)val, len, true);
}

ct_store *ct_file_store_new(const char *path, int num_workers)
{
    const char *op = "ct_file_store_new";
    (void)num_workers;
    if (!path) {
        ct_error_set(CT_ERR_NULL_ARG, op, "path is NULL");
        return NULL;
    }
    ct_store *s = ct__store_new(CT__STORE_FILE, op);
    if (!s) {
        return NULL;
    }
    s->fd = open(path, O_RDWR | O_CREAT, 0644);
    if (s->fd < 0) {
        ct__dist_fail(CT_ERR_IO, op, "cannot open %s: %s", path, strerror(errno));
        ct_store_free(s);
        return NULL;
    }
    return s;
}

/* ---- TCP store ------------------------------------------------------------------------ */
/* The IPv4 address of host (a numeric address, "localhost" or, where the C library declares
   getaddrinfo, any name); false when it cannot be resolved. */
static bool ct__tcp_resolve(const char *host, struct in_addr *addr)
{
    if (inet_pton(AF_INET, host, addr) == 1) {
        return true;
    }
    if (strcmp(host, "localhost") == 0) {
        return inet_pton(AF_INET, "127.0.0.1", addr) == 1;
    }
#ifdef AI_PASSIVE /* netdb.h declares getaddrinfo (POSIX 2001 visible) */
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &ai) != 0 || !ai) {
        return false;
    }
    *addr = ((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr;
    freeaddrinfo(ai);
    return true;
#else
    return false;
#endif
}

/* Serves one request of client fd on the master's map; false when the client is gone. */
static bool ct__tcp_serve(ct_store *s, int fd)
{
    uint8_t cmd = 0;
    uint32_t klen = 0;
    if (!ct__io_all(fd, &cmd, 1, false) || !ct__io_all(fd, &klen, sizeof klen, false) ||
        klen > (1u << 20)) {
        return false;
    }
    char *key = (char *)malloc((size_t)klen + 1);
    bool ok = key && ct__io_all(fd, key, klen, false);
    if (ok) {
        key[klen] = '\0';
    }
    if (ok && cmd == CT__TCP_SET) {
        uint64_t vlen = 0;
        ok = ct__io_all(fd, &vlen, sizeof vlen, false) && vlen < ((uint64_t)1 << 40);
        uint8_t *v = ok ? (uint8_t *)malloc((size_t)vlen + 1) : NULL;
        ok = v && ct__io_all(fd, v, (size_t)vlen, false);
        pthread_mutex_lock(&s->mu);
        uint8_t st = ok && ct__kv_set(&s->map, key, klen, v, (size_t)vlen);
        pthread_mutex_unlock(&s->mu);
        free(v);
        ok = ok && ct__io_all(fd, &st, 1, true);
    } else if (ok && cmd == CT__TCP_GET) {
        pthread_mutex_lock(&s->mu);
        const ct__kv *e = ct__kv_find(&s->map, key);
        uint8_t found = e != NULL;
        uint64_t vlen = e ? e->len : 0;
        ok = ct__io_all(fd, &found, 1, true) && ct__io_all(fd, &vlen, sizeof vlen, true) &&
             (!e || ct__io_all(fd, e->val, e->len, true));
        pthread_mutex_unlock(&s->mu);
    } else if (ok && cmd == CT__TCP_ADD) {
        int64_t amount = 0, value = 0;
        char text[32];
        ok = ct__io_all(fd, &amount, sizeof amount, false);
        pthread_mutex_lock(&s->mu);
        uint8_t st = ok && ct__kv_counter(&s->map, key, amount, text) &&
                     ct__kv_set(&s->map, key, klen, text, strlen(text));
        pthread_mutex_unlock(&s->mu);
        value = st ? (int64_t)strtoll(text, NULL, 10) : 0;
        ok = ok && ct__io_all(fd, &st, 1, true) && ct__io_all(fd, &value, sizeof value, true);
    } else {
        ok = false;
    }
    free(key);
    return ok;
}

/* The master's thread: accepts clients and serves their requests until stop. */
static void *ct__tcp_server(void *arg)
{
    ct_store *s = (ct_store *)arg;
    struct pollfd fds[1024];
    int n = 1;
    fds[0].fd = s->listen_fd;
    fds[0].events = POLLIN;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        bool stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop) {
            break;
        }
        if (poll(fds, (nfds_t)n, 50) <= 0) {
            continue;
        }
        for (int i = n - 1; i >= 1; i--) {
            if (fds[i].revents && !ct__tcp_serve(s, fds[i].fd)) {
                close(fds[i].fd);
                fds[i] = fds[--n];
            }
        }
        if ((fds[0].revents & POLLIN) && n < 1024) {
            int c = accept(s->listen_fd, NULL, NULL);
            if (c >= 0) {
                int one = 1;
                setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fds[n].fd = c;
                fds[n].events = POLLIN;
                fds[n++].revents = 0;
                pthread_mutex_lock(&s->mu);
                s->n_clients++;
                pthread_mutex_unlock(&s->mu);
            }
        }
    }
    for (int i = 1; i < n; i++) {
        close(fds[i].fd);
    }
    return NULL;
}

static ct_status ct__tcp_listen(ct_store *s, struct in_addr addr, int port, const char *op)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr = addr;
    int one = 1;
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->listen_fd < 0 ||
        setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(s->listen_fd, 128) != 0 ||
        getsockname(s->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
        return ct__dist_fail(CT_ERR_DIST, op, "The server socket has failed to listen on "
                             "port %d: %s", port, strerror(errno));
    }
    s->port = ntohs(sa.sin_port);
    if (pthread_create(&s->server, NULL, ct__tcp_server, s) != 0) {
        return ct__dist_fail(CT_ERR_DIST, op, "cannot start the store's server thread");
    }
    s->serving = true;
    return CT_OK;
}

static ct_status ct__tcp_connect(ct_store *s, struct in_addr addr, int port, const char *op)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr = addr;
    int64_t end = ct__store_now_ms() + s->timeout_ms;
    for (int wait = 1;; wait = wait < 256 ? 2 * wait : wait) {
        s->fd = socket(AF_INET, SOCK_STREAM, 0);
        if (s->fd >= 0 && connect(s->fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            int one = 1;
            setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            s->port = port;
            return CT_OK;
        }
        if (s->fd >= 0) {
            close(s->fd);
            s->fd = -1;
        }
        if (ct__store_now_ms() > end) {
            return ct__dist_fail(CT_ERR_DIST, op, "The client socket has timed out after %lld "
                                 "ms while trying to connect to port %d.",
                                 (long long)s->timeout_ms, port);
        }
        ct__store_sleep(wait);
    }
}

ct_store *ct_tcp_store_new(const char *host_name, int port, int world_size, bool is_master,
                           int64_t timeout_ms, bool wait_for_workers)
{
    const char *op = "ct_tcp_store_new";
    if (!host_name) {
        ct_error_set(CT_ERR_NULL_ARG, op, "host_name is NULL");
        return NULL;
    }
    if (port < 0 || port > 65535 || (!is_master && port == 0)) {
        ct__dist_fail(CT_ERR_VALUE, op, "invalid port %d", port);
        return NULL;
    }
    struct in_addr addr;
    if (!ct__tcp_resolve(host_name, &addr)) {
        ct__dist_fail(CT_ERR_DIST, op, "cannot resolve the address of '%s'", host_name);
        return NULL;
    }
    ct_store *s = ct__store_new(CT__STORE_TCP, op);
    if (!s) {
        return NULL;
    }
    s->timeout_ms = timeout_ms > 0 ? timeout_ms : CT__STORE_TIMEOUT_MS;
    ct_status st = is_master ? ct__tcp_listen(s, addr, port, op)
                             : ct__tcp_connect(s, addr, port, op);
    int64_t end = ct__store_now_ms() + s->timeout_ms;
    for (bool waiting = st == CT_OK && is_master && wait_for_workers && world_size > 1;
         waiting;) {
        pthread_mutex_lock(&s->mu);
        waiting = s->n_clients < world_size - 1;
        pthread_mutex_unlock(&s->mu);
        if (waiting && ct__store_now_ms() > end) {
            st = ct__dist_fail(CT_ERR_DIST, op, "Timed out after %lld ms waiting for "
                               "clients. %d/%d clients joined.", (long long)s->timeout_ms,
                               s->n_clients, world_size - 1);
            break;
        }
        ct__store_sleep(1);
    }
    if (st != CT_OK) {
        ct_store_free(s);
        return NULL;
    }
    return s;
}

int ct_tcp_store_port(const ct_store *store)
{
    return store && store->kind == CT__STORE_TCP ? store->port : -1;
}

/* A client's request; reply receives the status/found byte. */
static bool ct__tcp_request(ct_store *s, uint8_t cmd, const char *key, const void *val,
                            size_t len, uint8_t *reply)
{
    uint32_t klen = (uint32_t)strlen(key);
    uint64_t vlen = len;
    bool ok = ct__io_all(s->fd, &cmd, 1, true) && ct__io_all(s->fd, &klen, sizeof klen, true) &&
              ct__io_all(s->fd, (void *)(uintptr_t)key, klen, true);
    if (ok && cmd == CT__TCP_SET) {
        ok = ct__io_all(s->fd, &vlen, sizeof vlen, true) &&
             ct__io_all(s->fd, (void *)(uintptr_t)val, len, true);
    } else if (ok && cmd == CT__TCP_ADD) {
        ok = ct__io_all(s->fd, (void *)(uintptr_t)val, sizeof(int64_t), true);
    }
    return ok && ct__io_all(s->fd, reply, 1, false);
}

/* ---- the operations, per kind ------------------------------------------------------------ */
/* The store's map is current (a file store: replayed under a lock of type, kept locked). */
static ct_status ct__store_enter(ct_store *s, short type, const char *op)
{
    pthread_mutex_lock(&s->mu);
    if (s->kind == CT__STORE_FILE && (!ct__file_lock(s->fd, type) || !ct__file_replay(s))) {
        pthread_mutex_unlock(&s->mu);
        return ct__dist_fail(CT_ERR_IO, op, "cannot lock or read the store's file: %s",
                             strerror(errno));
    }
    return CT_OK;
}

static void ct__store_leave(ct_store *s)
{
    if (s->kind == CT__STORE_FILE) {
        ct__file_lock(s->fd, F_UNLCK);
    }
    pthread_mutex_unlock(&s->mu);
}

static bool ct__store_is_client(const ct_store *s)
{
    return s->kind == CT__STORE_TCP && s->listen_fd < 0;
}

static ct_status ct__store_lost(ct_store *s, const char *op)
{
    pthread_mutex_unlock(&s->mu);
    return ct__dist_fail(CT_ERR_DIST, op, "lost the connection to the store's server");
}

ct_status ct_store_set(ct_store *store, const char *key, const void *value, size_t len)
{
    const char *op = "ct_store_set";
    if (!store || !key || (!value && len > 0)) {
        return ct_error_set(CT_ERR_NULL_ARG, op, "store, key or value is NULL");
    }
    if (ct__store_is_client(store)) {
        uint8_t st = 0;
        pthread_mutex_lock(&store->mu);
        if (!ct__tcp_request(store, CT__TCP_SET, key, value, len, &st)) {
            return ct__store_lost(store, op);
        }
        pthread_mutex_unlock(&store->mu);
        return st ? CT_OK : ct__dist_fail(CT_ERR_OOM, op, "the server ran out of memory");
    }
    ct_status status = ct__store_enter(store, F_WRLCK, op);
    if (status != CT_OK) {
        return status;
    }
    bool ok = store->kind == CT__STORE_FILE ? ct__file_append(store, key, value, len)
                                            : ct__kv_set(&store->map, key, strlen(key), value,
                                                         len);
    ct__store_leave(store);
    return ok ? CT_OK : ct__dist_fail(CT_ERR_IO, op, "cannot store key '%s'", key);
}

/* One look for key: *found, and with it up to cap bytes in value and the length in *len. */
static ct_status ct__store_try_get(ct_store *s, const char *key, void *value, size_t cap,
                                   bool *found, uint64_t *len, const char *op)
{
    if (ct__store_is_client(s)) {
        uint8_t f = 0;
        pthread_mutex_lock(&s->mu);
        if (!ct__tcp_request(s, CT__TCP_GET, key, NULL, 0, &f) ||
            !ct__io_all(s->fd, len, sizeof *len, false)) {
            return ct__store_lost(s, op);
        }
        bool ok = true;
        for (uint64_t i = 0; i < *len && ok; i++) { /* the bytes beyond cap are read, dropped */
            uint8_t b;
            ok = ct__io_all(s->fd, &b, 1, false);
            if (ok && i < cap) {
                ((uint8_t *)value)[i] = b;
            }
        }
        if (!ok) {
            return ct__store_lost(s, op);
        }
        pthread_mutex_unlock(&s->mu);
        *found = f != 0;
        return CT_OK;
    }
    ct_status st = ct__store_enter(s, F_RDLCK, op);
    if (st != CT_OK) {
        return st;
    }
    const ct__kv *e = ct__kv_find(&s->map, key);
    *found = e != NULL;
    *len = e ? e->len : 0;
    if (e && value) {
        memcpy(value, e->val, e->len < cap ? e->len : cap);
    }
    ct__store_leave(s);
    return CT_OK;
}

/* Waits for key until end_ms (polled with a growing pause); the value as ct__store_try_get. */
static ct_status ct__store_await(ct_store *s, const char *key, void *value, size_t cap,
                                 uint64_t *len, int64_t timeout_ms, const char *op)
{
    int64_t end = ct__store_now_ms() + timeout_ms;
    for (int wait = 1;; wait = wait < 64 ? 2 * wait : wait) {
        bool found = false;
        ct_status st = ct__store_try_get(s, key, value, cap, &found, len, op);
        if (st != CT_OK || found) {
            return st;
        }
        if (ct__store_now_ms() > end) {
            return ct__dist_fail(CT_ERR_DIST, op, "Wait timeout after %lld ms for key(s): [%s]",
                                 (long long)timeout_ms, key);
        }
        ct__store_sleep(wait);
    }
}

int64_t ct_store_get(ct_store *store, const char *key, void *value, size_t cap)
{
    const char *op = "ct_store_get";
    if (!store || !key || (!value && cap > 0)) {
        ct_error_set(CT_ERR_NULL_ARG, op, "store, key or value is NULL");
        return -1;
    }
    uint64_t len = 0;
    ct_status st = ct__store_await(store, key, value, cap, &len, store->timeout_ms, op);
    return st == CT_OK ? (int64_t)len : -1;
}

int64_t ct_store_add(ct_store *store, const char *key, int64_t amount)
{
    const char *op = "ct_store_add";
    if (!store || !key) {
        ct_error_set(CT_ERR_NULL_ARG, op, "store or key is NULL");
        return INT64_MIN;
    }
    if (ct__store_is_client(store)) {
        uint8_t st = 0;
        int64_t v = 0;
        pthread_mutex_lock(&store->mu);
        if (!ct__tcp_request(store, CT__TCP_ADD, key, &amount, sizeof amount, &st) ||
            !ct__io_all(store->fd, &v, sizeof v, false)) {
            ct__store_lost(store, op);
            return INT64_MIN;
        }
        pthread_mutex_unlock(&store->mu);
        if (!st) {
            ct__dist_fail(CT_ERR_VALUE, op, "the value of key '%s' is not an integer", key);
            return INT64_MIN;
        }
        return v;
    }
    if (ct__store_enter(store, F_WRLCK, op) != CT_OK) {
        return INT64_MIN;
    }
    char text[32];
    bool counter = ct__kv_counter(&store->map, key, amount, text);
    size_t n = strlen(text);
    bool ok = counter && (store->kind == CT__STORE_FILE
                              ? ct__file_append(store, key, text, n)
                              : ct__kv_set(&store->map, key, strlen(key), text, n));
    ct__store_leave(store);
    if (!counter) {
        ct__dist_fail(CT_ERR_VALUE, op, "the value of key '%s' is not an integer", key);
        return INT64_MIN;
    }
    if (!ok) {
        ct__dist_fail(CT_ERR_IO, op, "cannot store key '%s'", key);
        return INT64_MIN;
    }
    return (int64_t)strtoll(text, NULL, 10);
}

ct_status ct_store_wait(ct_store *store, const char *const *keys, int n, int64_t timeout_ms)
{
    const char *op = "ct_store_wait";
    if (!store || (!keys && n > 0)) {
        return ct_error_set(CT_ERR_NULL_ARG, op, "store or keys is NULL");
    }
    int64_t end = ct__store_now_ms() + (timeout_ms < 0 ? store->timeout_ms : timeout_ms);
    for (int i = 0; i < n; i++) {
        uint64_t len = 0;
        if (!keys[i]) {
            return ct__dist_fail(CT_ERR_NULL_ARG, op, "keys[%d] is NULL", i);
        }
        int64_t left = end - ct__store_now_ms();
        ct_status st = ct__store_await(store, keys[i], NULL, 0, &len, left > 0 ? left : 0, op);
        if (st != CT_OK) {
            return st;
        }
    }
    return CT_OK;
}

ct_status ct_store_set_timeout(ct_store *store, int64_t timeout_ms)
{
    if (!store) {
        return ct_error_set(CT_ERR_NULL_ARG, "ct_store_set_timeout", "store is NULL");
    }
    if (timeout_ms <= 0) {
        return ct__dist_fail(CT_ERR_VALUE, "ct_store_set_timeout", "timeout must be positive, "
                             "got %lld ms", (long long)timeout_ms);
    }
    store->timeout_ms = timeout_ms;
    return CT_OK;
}

void ct_store_free(ct_store *store)
{
    if (!store) {
        return;
    }
    if (store->serving) {
        pthread_mutex_lock(&store->mu);
        store->stop = true;
        pthread_mutex_unlock(&store->mu);
        pthread_join(store->server, NULL);
    }
    if (store->listen_fd >= 0) {
        close(store->listen_fd);
    }
    if (store->fd >= 0) {
        close(store->fd);
    }
    ct__kv_clear(&store->map);
    pthread_mutex_destroy(&store->mu);
    free(store);
}

/* ---- env:// ---------------------------------------------------------------------------- */
/* The value of the environment variable name; NULL after recording PyTorch's error. */
static const char *ct__env_required(const char *name, const char *op)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        ct__dist_fail(CT_ERR_VALUE, op, "Error initializing torch.distributed using env:// "
                      "rendezvous: environment variable %s expected, but not set", name);
        return NULL;
    }
    return v;
}

/* Sets "ct_dist_init_env/<what>/<rank>", then waits for those of ranks 0..n-1. */
static ct_status ct__env_barrier(ct_store *s, const char *what, int rank, int n)
{
    char key[96];
    snprintf(key, sizeof key, "ct_dist_init_env/%s/%d", what, rank);
    ct_status st = ct_store_set(s, key, "", 0);
    for (int k = 0; k < n && st == CT_OK; k++) {
        const char *keys[1] = {key};
        snprintf(key, sizeof key, "ct_dist_init_env/%s/%d", what, k);
        st = ct_store_wait(s, keys, 1, -1);
    }
    return st;
}

ct_status ct_dist_init_env(const char *backend, int64_t timeout_ms)
{
    const char *op = "ct_dist_init_env";
    const char *rank_s = ct__env_required("RANK", op);
    const char *world_s = rank_s ? ct__env_required("WORLD_SIZE", op) : NULL;
    const char *addr = world_s ? ct__env_required("MASTER_ADDR", op) : NULL;
    const char *port_s = addr ? ct__env_required("MASTER_PORT", op) : NULL;
    if (!port_s) {
        return ct_error_code();
    }
    int rank = atoi(rank_s), world = atoi(world_s), port = atoi(port_s);
    if (rank < 0 || world < 1 || rank >= world) {
        return ct__dist_fail(CT_ERR_VALUE, op, "RANK %s and WORLD_SIZE %s do not make a rank of "
                             "the world", rank_s, world_s);
    }
    /* the rendezvous: every rank checks in with rank 0's store and waits for the others;
       then the master serves until every rank has seen them all */
    ct_store *s = ct_tcp_store_new(addr, port, world, rank == 0, timeout_ms, true);
    ct_status st = s ? ct__env_barrier(s, "joined", rank, world) : ct_error_code();
    if (st == CT_OK) {
        st = ct__env_barrier(s, "done", rank, rank == 0 ? world : 0);
    }
    ct_store_free(s);
    if (st != CT_OK) {
        return st;
    }
    ct_dist_init_opts o = ct_dist_init_defaults();
    o.rank = rank;
    o.world_size = world;
    o.timeout_ms = timeout_ms;
    return ct_dist_init_process_group(backend, &o);
}

#undef CT__STORE_TIMEOUT_MS
