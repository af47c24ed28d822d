/*
 * What importing a stored P-256 private key costs in libcrypto, by step: the work
 * `ECPrivateKey(rawRepresentation:curve:)` does each time `SoftwareSecureArea` decrypts a
 * key (docs/performance.md, 2026-12-05, third session). Not part of any SwiftPM target;
 * .ci/run builds and runs it. Prints the mean of 5,000 calls of:
 *   - d·G with `EC_POINT_mul` on a group built once;
 *   - the same plus the point's uncompressed encoding;
 *   - `EVP_PKEY_fromdata` of the key pair (group name, scalar, point), as the SDK imports it;
 *   - `EVP_PKEY_fromdata` of the group name alone: the group built from its name, which the
 *     key pair import pays inside;
 *   - a P-256 key generation, for scale.
 *
 *     cc -O2 -o /tmp/private-key-import Benchmarks/census/private-key-import.c -lcrypto && /tmp/private-key-import
 */
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 5000

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static void check(int ok, const char *what) {
    if (!ok) { fprintf(stderr, "%s failed\n", what); exit(1); }
}

/* Imports a key from `group` alone, or from the key pair when `scalar` is given. */
static void import(const BIGNUM *scalar, const unsigned char *point, size_t point_length) {
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    check(context != NULL && EVP_PKEY_fromdata_init(context) == 1, "context");
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    check(builder != NULL, "builder");
    OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
    if (scalar != NULL) {
        OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_PRIV_KEY, scalar);
        OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, point, point_length);
    }
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(builder);
    EVP_PKEY *key = NULL;
    check(EVP_PKEY_fromdata(context, &key, scalar != NULL ? EVP_PKEY_KEYPAIR : EVP_PKEY_KEY_PARAMETERS, params) == 1,
          "fromdata");
    EVP_PKEY_free(key);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(builder);
    EVP_PKEY_CTX_free(context);
}

int main(void) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    BN_CTX *bn_context = BN_CTX_new();
    unsigned char raw[32];
    for (int i = 0; i < 32; i++) raw[i] = (unsigned char)(i + 1);
    BIGNUM *scalar = BN_bin2bn(raw, sizeof raw, NULL);
    EC_POINT *point = EC_POINT_new(group);
    unsigned char encoded[65];
    check(group && bn_context && scalar && point, "set-up");

    double start = seconds();
    for (int i = 0; i < ROUNDS; i++) check(EC_POINT_mul(group, point, scalar, NULL, NULL, bn_context) == 1, "mul");
    printf("d*G (EC_POINT_mul)                    %6.2f us\n", (seconds() - start) / ROUNDS * 1e6);

    start = seconds();
    for (int i = 0; i < ROUNDS; i++) {
        check(EC_POINT_mul(group, point, scalar, NULL, NULL, bn_context) == 1, "mul");
        check(EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, encoded, sizeof encoded, bn_context) == 65,
              "point2oct");
    }
    printf("d*G and its encoding                  %6.2f us\n", (seconds() - start) / ROUNDS * 1e6);

    start = seconds();
    for (int i = 0; i < ROUNDS; i++) import(scalar, encoded, sizeof encoded);
    printf("EVP_PKEY_fromdata, key pair           %6.2f us\n", (seconds() - start) / ROUNDS * 1e6);

    start = seconds();
    for (int i = 0; i < ROUNDS; i++) import(NULL, NULL, 0);
    printf("EVP_PKEY_fromdata, group name only    %6.2f us\n", (seconds() - start) / ROUNDS * 1e6);

    start = seconds();
    for (int i = 0; i < ROUNDS; i++) EVP_PKEY_free(EVP_EC_gen("P-256"));
    printf("P-256 key generation (EVP_EC_gen)     %6.2f us\n", (seconds() - start) / ROUNDS * 1e6);

    EC_POINT_free(point);
    BN_free(scalar);
    BN_CTX_free(bn_context);
    EC_GROUP_free(group);
    return 0;
}
