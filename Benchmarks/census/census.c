/*
 * census.so: counts, in a process it is preloaded into, the libcrypto operations and
 * the Swift concurrency runtime calls that a benchmark case makes, and prints the
 * totals to stderr at exit (one "census <name> <calls> <bytes>" line each).
 *
 * It answers "does the SDK do more crypto than its floor?" and "how many tasks and
 * continuations does a session create?", which a sampling profiler cannot. Run a case
 * at two iteration counts and divide the difference by the extra iterations; what the
 * floor's own body does (see the case's source) comes off the result.
 *
 *   gcc -O2 -shared -fPIC -o /tmp/census.so Benchmarks/census/census.c -ldl
 *   LD_PRELOAD=/tmp/census.so .build/release/wallet-bench proximity --iterations 5 2>&1 | grep '^census'
 *
 * Calls are caught where they cross a shared library's PLT: the SDK's calls into
 * libcrypto, libcrypto's own calls to its exported functions (X509_verify_cert's
 * signature check reaches EVP_DigestVerify, EVP_Digest reaches EVP_DigestUpdate), and
 * the Swift code's calls into libswift_Concurrency. Not part of any SwiftPM target;
 * .ci/run builds it and checks it counts the verifications key-import.c makes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

enum {
    DIGEST_VERIFY, DIGEST_SIGN, PKEY_DERIVE, PKEY_GENERATE, KDF_DERIVE, CIPHER_UPDATE,
    DIGEST, DIGEST_UPDATE, X509_VERIFY_CERT, MD_CTX_NEW, PKEY_CTX_NEW_FROM_PKEY,
    PKEY_DUP, SET_ENCODED_PUBLIC_KEY, TASK_CREATE, CONTINUATION_INIT, COUNTERS
};

static const char *const names[COUNTERS] = {
    "EVP_DigestVerify", "EVP_DigestSign", "EVP_PKEY_derive", "EVP_PKEY_generate",
    "EVP_KDF_derive", "EVP_CipherUpdate", "EVP_Digest", "EVP_DigestUpdate",
    "X509_verify_cert", "EVP_MD_CTX_new", "EVP_PKEY_CTX_new_from_pkey",
    "EVP_PKEY_dup", "EVP_PKEY_set1_encoded_public_key", "swift_task_create", "swift_continuation_init",
};

static atomic_long calls[COUNTERS];
static atomic_long bytes[COUNTERS];

static void count(int counter, size_t length) {
    atomic_fetch_add_explicit(&calls[counter], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes[counter], (long)length, memory_order_relaxed);
}

__attribute__((destructor)) static void report(void) {
    for (int counter = 0; counter < COUNTERS; counter++)
        fprintf(stderr, "census %-28s %10ld %12ld\n", names[counter],
                atomic_load(&calls[counter]), atomic_load(&bytes[counter]));
}

/* The next definition of `name` after this library's (the real one). */
#define REAL(type, name) \
    static type real; \
    if (!real) real = (type)dlsym(RTLD_NEXT, name)

typedef int (*digest_verify_fn)(void *, const unsigned char *, size_t, const unsigned char *, size_t);
int EVP_DigestVerify(void *context, const unsigned char *signature, size_t signatureLength,
                     const unsigned char *message, size_t messageLength) {
    REAL(digest_verify_fn, "EVP_DigestVerify");
    count(DIGEST_VERIFY, messageLength);
    return real(context, signature, signatureLength, message, messageLength);
}

typedef int (*digest_sign_fn)(void *, unsigned char *, size_t *, const unsigned char *, size_t);
int EVP_DigestSign(void *context, unsigned char *signature, size_t *signatureLength,
                   const unsigned char *message, size_t messageLength) {
    REAL(digest_sign_fn, "EVP_DigestSign");
    if (signature) count(DIGEST_SIGN, messageLength);   /* not the length query */
    return real(context, signature, signatureLength, message, messageLength);
}

typedef int (*derive_fn)(void *, unsigned char *, size_t *);
int EVP_PKEY_derive(void *context, unsigned char *key, size_t *keyLength) {
    REAL(derive_fn, "EVP_PKEY_derive");
    if (key) count(PKEY_DERIVE, 0);   /* not the length query */
    return real(context, key, keyLength);
}

typedef int (*generate_fn)(void *, void **);
int EVP_PKEY_generate(void *context, void **key) {
    REAL(generate_fn, "EVP_PKEY_generate");
    count(PKEY_GENERATE, 0);
    return real(context, key);
}

typedef int (*kdf_derive_fn)(void *, unsigned char *, size_t, const void *);
int EVP_KDF_derive(void *context, unsigned char *key, size_t keyLength, const void *parameters) {
    REAL(kdf_derive_fn, "EVP_KDF_derive");
    count(KDF_DERIVE, keyLength);
    return real(context, key, keyLength, parameters);
}

typedef int (*cipher_update_fn)(void *, unsigned char *, int *, const unsigned char *, int);
int EVP_CipherUpdate(void *context, unsigned char *output, int *outputLength, const unsigned char *input, int inputLength) {
    REAL(cipher_update_fn, "EVP_CipherUpdate");
    count(CIPHER_UPDATE, inputLength > 0 ? (size_t)inputLength : 0);
    return real(context, output, outputLength, input, inputLength);
}

typedef int (*digest_fn)(const void *, size_t, unsigned char *, unsigned int *, const void *, void *);
int EVP_Digest(const void *data, size_t length, unsigned char *digest, unsigned int *digestLength,
               const void *type, void *engine) {
    REAL(digest_fn, "EVP_Digest");
    count(DIGEST, length);
    return real(data, length, digest, digestLength, type, engine);
}

typedef int (*digest_update_fn)(void *, const void *, size_t);
int EVP_DigestUpdate(void *context, const void *data, size_t length) {
    REAL(digest_update_fn, "EVP_DigestUpdate");
    count(DIGEST_UPDATE, length);
    return real(context, data, length);
}

typedef int (*verify_cert_fn)(void *);
int X509_verify_cert(void *context) {
    REAL(verify_cert_fn, "X509_verify_cert");
    count(X509_VERIFY_CERT, 0);
    return real(context);
}

typedef void *(*md_ctx_new_fn)(void);
void *EVP_MD_CTX_new(void) {
    REAL(md_ctx_new_fn, "EVP_MD_CTX_new");
    count(MD_CTX_NEW, 0);
    return real();
}

typedef void *(*pkey_ctx_new_fn)(void *, void *, const char *);
void *EVP_PKEY_CTX_new_from_pkey(void *library, void *key, const char *properties) {
    REAL(pkey_ctx_new_fn, "EVP_PKEY_CTX_new_from_pkey");
    count(PKEY_CTX_NEW_FROM_PKEY, 0);
    return real(library, key, properties);
}

/* A public point import: the curve's template key duplicated, then its point set. */
typedef void *(*pkey_dup_fn)(void *);
void *EVP_PKEY_dup(void *key) {
    REAL(pkey_dup_fn, "EVP_PKEY_dup");
    count(PKEY_DUP, 0);
    return real(key);
}

typedef int (*set_encoded_fn)(void *, const unsigned char *, size_t);
int EVP_PKEY_set1_encoded_public_key(void *key, const unsigned char *point, size_t length) {
    REAL(set_encoded_fn, "EVP_PKEY_set1_encoded_public_key");
    count(SET_ENCODED_PUBLIC_KEY, length);
    return real(key, point, length);
}

/*
 * swift_task_create(flags, options, result type, entry, context) returns the task and
 * its initial context in two registers, which a C struct of two pointers matches on
 * x86_64 and arm64; with plain pointer arguments the Swift and C conventions agree.
 */
typedef struct { void *task; void *context; } task_and_context;
typedef task_and_context (*task_create_fn)(size_t, void *, const void *, void *, void *);
task_and_context swift_task_create(size_t flags, void *options, const void *resultType, void *entry, void *context) {
    REAL(task_create_fn, "swift_task_create");
    count(TASK_CREATE, 0);
    return real(flags, options, resultType, entry, context);
}

typedef void *(*continuation_init_fn)(void *, size_t);
void *swift_continuation_init(void *context, size_t flags) {
    REAL(continuation_init_fn, "swift_continuation_init");
    count(CONTINUATION_INIT, 0);
    return real(context, flags);
}
