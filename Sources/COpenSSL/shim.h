#ifndef WALLET_COPENSSL_SHIM_H
#define WALLET_COPENSSL_SHIM_H
// The libcrypto headers the SDK uses. Only EVP-level APIs (plus X509 and the
// error queue) are used; legacy low-level key APIs are deprecated in OpenSSL 3.
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/obj_mac.h>
#include <openssl/encoder.h>
#include <openssl/decoder.h>

// Macros Swift cannot import directly.
static inline int wallet_BIO_get_mem_data(BIO *b, char **pp) { return (int)BIO_get_mem_data(b, pp); }
static inline STACK_OF(X509) *wallet_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int wallet_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline void wallet_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
static inline void wallet_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline int wallet_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *wallet_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
static inline int wallet_sk_GENERAL_NAME_num(const GENERAL_NAMES *sk) { return sk_GENERAL_NAME_num(sk); }
static inline GENERAL_NAME *wallet_sk_GENERAL_NAME_value(const GENERAL_NAMES *sk, int i) { return sk_GENERAL_NAME_value(sk, i); }
static inline void wallet_GENERAL_NAMES_free(GENERAL_NAMES *sk) { GENERAL_NAMES_free(sk); }
static inline int wallet_sk_ASN1_OBJECT_num(const EXTENDED_KEY_USAGE *sk) { return sk_ASN1_OBJECT_num(sk); }
static inline ASN1_OBJECT *wallet_sk_ASN1_OBJECT_value(const EXTENDED_KEY_USAGE *sk, int i) { return sk_ASN1_OBJECT_value(sk, i); }
static inline void wallet_EXTENDED_KEY_USAGE_free(EXTENDED_KEY_USAGE *sk) { EXTENDED_KEY_USAGE_free(sk); }
static inline unsigned long wallet_ERR_get_error(void) { return ERR_get_error(); }
static inline void wallet_OPENSSL_cleanse(void *p, size_t n) { OPENSSL_cleanse(p, n); }
static inline void wallet_OPENSSL_free(void *p) { OPENSSL_free(p); }

// WalletCrypto primitives: key-selection masks are multi-line macros Swift does not import.
static inline int wallet_EVP_PKEY_KEYPAIR(void) { return EVP_PKEY_KEYPAIR; }
static inline int wallet_EVP_PKEY_PUBLIC_KEY(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int wallet_EVP_PKEY_KEY_PARAMETERS(void) { return EVP_PKEY_KEY_PARAMETERS; }

// WalletCrypto X509 builder: stack macros for GeneralNames and EKU OIDs.
static inline STACK_OF(GENERAL_NAME) *wallet_sk_GENERAL_NAME_new_null(void) { return sk_GENERAL_NAME_new_null(); }
static inline int wallet_sk_GENERAL_NAME_push(STACK_OF(GENERAL_NAME) *sk, GENERAL_NAME *n) { return sk_GENERAL_NAME_push(sk, n); }
static inline STACK_OF(ASN1_OBJECT) *wallet_sk_ASN1_OBJECT_new_null(void) { return sk_ASN1_OBJECT_new_null(); }
static inline int wallet_sk_ASN1_OBJECT_push(STACK_OF(ASN1_OBJECT) *sk, ASN1_OBJECT *o) { return sk_ASN1_OBJECT_push(sk, o); }

#endif
