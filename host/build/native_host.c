/* The native plugin host: loads one trusted native plugin library and serves
 * its calls over a pipe, for a git-agent-apply linked statically, which
 * cannot load a shared library into itself (a static glibc's dlopen gives
 * the library a second C library that crashes it). host/build.rs compiles
 * this with the system's C compiler, dynamically linked, and embeds it in
 * the binary; host/src/runtime/native/host.rs starts it and speaks to it.
 *
 * The table it calls is agent-apply-sdk's `NativeTable` (src/native.rs),
 * ABI version 1. All numbers cross in this machine's byte order.
 *
 * Usage: native-host LIBRARY. It first writes a hello:
 *   u32 0, u32 abi_version, u32 table_size, and only when both are what
 *     this host reads (version 1, a table at least this size), u64 n and
 *     the n bytes of the contract version; or
 *   u32 1 (the library did not load), u32 2 (it has no entry symbol) or
 *     u32 3 (the entry returned no table), then u64 n and n bytes saying why.
 * Then, per call read from stdin (u32 call: 0 info, 1 detect, 2 parse,
 * 3 apply, 4 render, 5 lint; u64 n; n request bytes), it writes u32 status,
 * u64 n and the n response bytes, and hands the plugin's buffer back to its
 * `free`. It exits when stdin ends. What the plugin itself prints to stdout
 * goes to stderr, so it cannot forge a response. */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ABI_VERSION 1
#define ENTRY_SYMBOL "agent_apply_native_plugin"
#define CALLS 6

typedef struct {
    uint8_t *ptr;
    size_t len;
    size_t capacity;
} Buffer;

typedef uint32_t (*Call)(const uint8_t *request, size_t request_len, Buffer *response);

typedef struct {
    uint32_t abi_version;
    uint32_t table_size;
    const uint8_t *contract_version;
    size_t contract_version_len;
    Call calls[CALLS];
    void (*free)(Buffer);
} Table;

static FILE *out;

static void put(const void *bytes, size_t n) {
    if (n && fwrite(bytes, 1, n, out) != n) exit(1);
}

static void put_u32(uint32_t value) { put(&value, sizeof value); }

static void put_text(const uint8_t *bytes, uint64_t n) {
    put(&n, sizeof n);
    put(bytes, n);
}

static int refuse(uint32_t kind, const char *why) {
    put_u32(kind);
    put_text((const uint8_t *)why, strlen(why));
    fflush(out);
    return 0;
}

static int get(void *bytes, size_t n) { return n == 0 || fread(bytes, 1, n, stdin) == n; }

int main(int argc, char **argv) {
    /* The protocol gets stdout's pipe; the plugin's own prints go to stderr. */
    int protocol = dup(1);
    if (argc != 2 || protocol < 0 || dup2(2, 1) < 0 || !(out = fdopen(protocol, "wb"))) return 2;

    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) return refuse(1, dlerror());
    const Table *(*entry)(void) = (const Table *(*)(void))dlsym(library, ENTRY_SYMBOL);
    if (!entry) return refuse(2, dlerror());
    const Table *table = entry();
    if (!table) return refuse(3, "`" ENTRY_SYMBOL "` returned a null table");

    put_u32(0);
    put_u32(table->abi_version);
    put_u32(table->table_size);
    if (table->abi_version != ABI_VERSION || table->table_size < sizeof(Table)) {
        fflush(out);
        return 0;
    }
    put_text(table->contract_version, table->contract_version_len);
    fflush(out);

    for (;;) {
        uint32_t call;
        uint64_t n;
        if (!get(&call, sizeof call)) return 0;
        if (!get(&n, sizeof n) || call >= CALLS) return 2;
        uint8_t *request = malloc(n ? n : 1);
        if (!request || !get(request, n)) return 2;
        Buffer response = {0, 0, 0};
        uint32_t status = table->calls[call](request, n, &response);
        free(request);
        put_u32(status);
        put_text(response.ptr, response.ptr ? response.len : 0);
        fflush(out);
        table->free(response);
    }
}
