/* dist/store.h - key-value stores (torch.distributed.Store) and env:// initialization.
 *
 * A store maps string keys to byte strings; every process of a job that opens the same store
 * sees the same keys: ct_hash_store_new within one process (its threads), ct_file_store_new
 * through a file on a shared file system, ct_tcp_store_new through a server that the master
 * process runs. get and wait block until the keys exist, at most the store's timeout.
 * Counters made by ct_store_add are stored as decimal text, as PyTorch's.
 * A store may be used by several threads at once.
 */

/* A store: opaque. Mirrors: torch.distributed.Store. */
typedef struct ct_store ct_store;

/* A new empty in-process store with a 300 s timeout. Returns: the store, owned by the caller
   (ct_store_free), or NULL after CT_ERR_OOM. Mirrors: torch.distributed.HashStore(). */
CTORCH_DIST_API ct_store *ct_hash_store_new(void);
/* A store kept in the file path (created when missing; an existing file's keys are kept), for
   num_workers processes (informational: the file is not deleted), with a 300 s timeout.
   Record format: ctorch's own (key and value with their lengths, appended under an fcntl
   lock), not PyTorch's. Returns: the store, or NULL. Errors: CT_ERR_NULL_ARG; CT_ERR_IO when
   the file cannot be opened. Mirrors: torch.distributed.FileStore(file_name, world_size). */
CTORCH_DIST_API ct_store *ct_file_store_new(const char *path, int num_workers);
/* A store served over TCP by the master process (is_master: it listens on port, 0: any free
   port, see ct_tcp_store_port) on host_name's address; the others connect to host_name:port,
   retrying until timeout_ms (<= 0: 300 s). world_size (> 0) with wait_for_workers: the master
   blocks until world_size - 1 clients connected. Returns: the store, or NULL. Errors:
   CT_ERR_NULL_ARG; CT_ERR_VALUE for a port outside 0..65535; CT_ERR_DIST when the address
   cannot be resolved, bound or reached in time. Mirrors: torch.distributed.TCPStore(
   host_name, port, world_size, is_master, timeout, wait_for_workers). */
CTORCH_DIST_API ct_store *ct_tcp_store_new(const char *host_name, int port, int world_size,
                                           bool is_master, int64_t timeout_ms,
                                           bool wait_for_workers);
/* The port a TCP store listens on (its master) or is connected to; -1 for other stores.
   Mirrors: TCPStore.port. */
CTORCH_DIST_API int ct_tcp_store_port(const ct_store *store);
/* Sets key to len bytes of value (replacing it). Returns: CT_OK. Errors: CT_ERR_NULL_ARG;
   CT_ERR_IO / CT_ERR_DIST from the file or the connection. Mirrors: Store.set(key, value). */
CTORCH_DIST_API ct_status ct_store_set(ct_store *store, const char *key, const void *value,
                                       size_t len);
/* Waits until key exists (at most the store's timeout) and copies up to cap bytes of its
   value into value (NULL with cap 0: only the length). Returns: the value's length, or -1
   after an error. Errors: CT_ERR_NULL_ARG; CT_ERR_DIST on timeout ("Wait timeout after
   300000 ms for key(s): [k]"), CT_ERR_IO / CT_ERR_DIST from the file or the connection.
   Mirrors: Store.get(key). */
CTORCH_DIST_API int64_t ct_store_get(ct_store *store, const char *key, void *value, size_t cap);
/* Adds amount to the integer counter key (a missing key counts as 0), atomically over every
   process of the store. Returns: the new value, or INT64_MIN after an error. Errors:
   CT_ERR_NULL_ARG; CT_ERR_VALUE when key holds something that is not an integer; as
   ct_store_set. Mirrors: Store.add(key, amount). */
CTORCH_DIST_API int64_t ct_store_add(ct_store *store, const char *key, int64_t amount);
/* Waits until every one of the n keys exists, at most timeout_ms (< 0: the store's timeout).
   Returns: CT_OK. Errors: as ct_store_get. Mirrors: Store.wait(keys, timeout). */
CTORCH_DIST_API ct_status ct_store_wait(ct_store *store, const char *const *keys, int n,
                                        int64_t timeout_ms);
/* Sets the timeout of get and wait (> 0). Mirrors: Store.set_timeout(timeout). */
CTORCH_DIST_API ct_status ct_store_set_timeout(ct_store *store, int64_t timeout_ms);
/* Closes the store (a TCP master stops serving); NULL is a no-op. */
CTORCH_DIST_API void ct_store_free(ct_store *store);

/* Initializes the default process group from the environment torchrun sets (the env://
   method): RANK, WORLD_SIZE and MASTER_ADDR, MASTER_PORT must be set; the ranks meet in a TCP
   store at MASTER_ADDR:MASTER_PORT (rank 0 serves it), then ct_dist_init_process_group(backend)
   runs with RANK and WORLD_SIZE (checked against MPI's: processes still start under mpirun,
   which carries the collectives); LOCAL_RANK picks NCCL's device. Returns: CT_OK. Errors:
   CT_ERR_VALUE "Error initializing torch.distributed using env:// rendezvous: environment
   variable RANK expected, but not set" (and the others); as ct_tcp_store_new and
   ct_dist_init_process_group. Mirrors: torch.distributed.init_process_group(backend,
   init_method="env://", timeout). */
CTORCH_DIST_API ct_status ct_dist_init_env(const char *backend, int64_t timeout_ms);
