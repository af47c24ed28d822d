/*
 * key-import: the ways libcrypto offers to turn an uncompressed P-256 point into an
 * EVP_PKEY, timed against each other and against one ECDSA verification, to check that
 * the SDK's import (`ECCurve.importPublicPoint`: duplicate the curve's parameters-only
 * key, then set the point) is the cheapest. Not part of any SwiftPM target; .ci/run
 * builds and runs it.
 *
 *   gcc -O2 -Wno-deprecated-declarations -o /tmp/key-import Benchmarks/census/key-import.c -lcrypto
 *   /tmp/key-import
 */
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <time.h>

static double seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static unsigned char message[300] = {5};
static unsigned char signature[80];
static size_t signatureLength = sizeof signature;

static int verifies(EVP_PKEY *key) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    int ok = EVP_DigestVerifyInit(context, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestVerify(context, signature, signatureLength, message, sizeof message) == 1;
    EVP_MD_CTX_free(context);
    return ok;
}

static EVP_PKEY *duplicateAndSet(EVP_PKEY *template, const unsigned char *point, size_t length) {
    EVP_PKEY *key = EVP_PKEY_dup(template);
    if (key && EVP_PKEY_set1_encoded_public_key(key, point, length) == 1) return key;
    EVP_PKEY_free(key);
    return NULL;
}

static EVP_PKEY *fromData(EVP_PKEY_CTX *context, unsigned char *point, size_t length) {
    EVP_PKEY *key = NULL;
    OSSL_PARAM parameters[] = {
        OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0),
        OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point, length), OSSL_PARAM_END,
    };
    if (EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, parameters) != 1) return NULL;
    return key;
}

static EVP_PKEY *legacy(const EC_GROUP *group, const unsigned char *point, size_t length) {
    EC_KEY *ecKey = EC_KEY_new();
    EC_POINT *decoded = EC_POINT_new(group);
    EVP_PKEY *key = EVP_PKEY_new();
    int ok = ecKey && decoded && key && EC_KEY_set_group(ecKey, group) == 1
        && EC_POINT_oct2point(group, decoded, point, length, NULL) == 1
        && EC_KEY_set_public_key(ecKey, decoded) == 1 && EVP_PKEY_assign_EC_KEY(key, ecKey) == 1;
    EC_POINT_free(decoded);
    if (ok) return key;
    EVP_PKEY_free(key);
    if (ecKey) EC_KEY_free(ecKey);
    return NULL;
}

#define TIME(label, count, body)                                                   \
    do {                                                                           \
        double start = seconds();                                                  \
        for (int i = 0; i < (count); i++) { body }                                 \
        printf("%-40s %8.2f µs\n", label, (seconds() - start) / (count) * 1e6);    \
    } while (0)

int main(void) {
    EVP_PKEY *signer = EVP_EC_gen("P-256");
    unsigned char point[65];
    size_t length = 0;
    if (!signer || EVP_PKEY_get_octet_string_param(signer, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &length) != 1)
        return 1;
    EVP_MD_CTX *signing = EVP_MD_CTX_new();
    if (EVP_DigestSignInit(signing, NULL, EVP_sha256(), NULL, signer) != 1
        || EVP_DigestSign(signing, signature, &signatureLength, message, sizeof message) != 1)
        return 1;
    EVP_MD_CTX_free(signing);

    EVP_PKEY_CTX *parameterContext = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    OSSL_PARAM group[] = {OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0), OSSL_PARAM_END};
    EVP_PKEY *template = NULL;
    if (EVP_PKEY_paramgen_init(parameterContext) != 1 || EVP_PKEY_CTX_set_params(parameterContext, group) != 1
        || EVP_PKEY_paramgen(parameterContext, &template) != 1)
        return 1;
    EC_GROUP *sharedGroup = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    unsigned char *spki = NULL;
    int spkiLength = i2d_PUBKEY(signer, &spki);
    EVP_PKEY_CTX *reused = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (!sharedGroup || spkiLength <= 0 || EVP_PKEY_fromdata_init(reused) != 1) return 1;

    const int imports = 20000, verifications = 3000;
    int failures = 0;
    TIME("duplicate and set (the SDK)", imports, {
        EVP_PKEY *key = duplicateAndSet(template, point, length);
        failures += !key;
        EVP_PKEY_free(key);
    });
    TIME("EVP_PKEY_fromdata, new context", imports, {
        EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
        EVP_PKEY *key = EVP_PKEY_fromdata_init(context) == 1 ? fromData(context, point, length) : NULL;
        failures += !key;
        EVP_PKEY_free(key);
        EVP_PKEY_CTX_free(context);
    });
    TIME("EVP_PKEY_fromdata, reused context", imports, {
        EVP_PKEY *key = fromData(reused, point, length);
        failures += !key;
        EVP_PKEY_free(key);
    });
    TIME("d2i_PUBKEY", imports / 10, {
        const unsigned char *cursor = spki;
        EVP_PKEY *key = d2i_PUBKEY(NULL, &cursor, spkiLength);
        failures += !key;
        EVP_PKEY_free(key);
    });
    TIME("legacy EC_KEY on a shared group", imports, {
        EVP_PKEY *key = legacy(sharedGroup, point, length);
        failures += !key;
        EVP_PKEY_free(key);
    });
    TIME("one verify", verifications, { failures += !verifies(signer); });
    TIME("duplicate and set, then one verify", verifications, {
        EVP_PKEY *key = duplicateAndSet(template, point, length);
        failures += !key || !verifies(key);
        EVP_PKEY_free(key);
    });
    TIME("legacy EC_KEY, then one verify", verifications, {
        EVP_PKEY *key = legacy(sharedGroup, point, length);
        failures += !key || !verifies(key);
        EVP_PKEY_free(key);
    });
    OPENSSL_free(spki);
    EVP_PKEY_CTX_free(reused);
    EVP_PKEY_CTX_free(parameterContext);
    EC_GROUP_free(sharedGroup);
    EVP_PKEY_free(template);
    EVP_PKEY_free(signer);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
