// swift-tools-version:6.0
import PackageDescription

// The wallet SDK (see ../shared/DESIGN.md for the layers). Layer 0: system
// libraries, CBOR, crypto over OpenSSL 3 with X.509, the runtime seams; layer 1:
// JOSE and COSE; layer 2: SD-JWT VC, mdoc, storage; layer 3: the protocols (OpenID4VCI,
// OpenID4VP, mdoc proximity) and the reference parties (test peers); layer 4: the
// WalletKit facade; layer 5: the `wallet` command.
let package = Package(
    name: "WalletSDK",
    defaultLocalization: "en",
    // Platforms (docs/platforms.md, README "Platforms"): built and tested on Linux;
    // macOS 13+ is expected to build with Homebrew's openssl@3 through pkg-config but is
    // not built in CI; iOS is not declared: libcrypto comes from pkg-config, which iOS
    // lacks, and the planned path is a vendored OpenSSL XCFramework behind WalletCrypto's
    // backend-neutral API. Nothing here needs more than macOS 13 (Duration, Clock).
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "WalletEncoding", targets: ["WalletEncoding"]),
        .library(name: "CBOR", targets: ["CBOR"]),
        .library(name: "WalletCrypto", targets: ["WalletCrypto"]),
        .library(name: "WalletRuntime", targets: ["WalletRuntime"]),
        .library(name: "JOSE", targets: ["JOSE"]),
        .library(name: "COSE", targets: ["COSE"]),
        .library(name: "SDJWT", targets: ["SDJWT"]),
        .library(name: "Mdoc", targets: ["Mdoc"]),
        .library(name: "WalletStorage", targets: ["WalletStorage"]),
        .library(name: "MdocProximity", targets: ["MdocProximity"]),
        .library(name: "OpenID4VCI", targets: ["OpenID4VCI"]),
        .library(name: "OpenID4VP", targets: ["OpenID4VP"]),
        .library(name: "ReferenceParties", targets: ["ReferenceParties"]),
        .library(name: "WalletInspect", targets: ["WalletInspect"]),
        .library(name: "WalletKit", targets: ["WalletKit"]),
        .executable(name: "wallet", targets: ["wallet"]),
        .executable(name: "wallet-bench", targets: ["wallet-bench"]),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // For the `wallet` CLI only: QR codes drawn in the terminal.
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"]), .brew(["qrencode"])]),

        .target(name: "WalletEncoding"),
        .target(name: "CBOR", dependencies: ["WalletEncoding"]),
        .target(name: "WalletRuntime", dependencies: ["WalletEncoding"]),
        .target(name: "WalletCrypto", dependencies: ["COpenSSL", "WalletEncoding"]),
        .target(name: "JOSE", dependencies: ["WalletCrypto", "WalletEncoding", "WalletRuntime", "CZlib"]),
        .target(name: "COSE", dependencies: ["CBOR", "WalletCrypto", "WalletEncoding"]),
        .target(name: "SDJWT", dependencies: ["JOSE", "WalletCrypto", "WalletEncoding", "WalletRuntime"]),
        .target(name: "Mdoc", dependencies: ["CBOR", "COSE", "WalletCrypto", "WalletEncoding", "WalletRuntime"]),
        .target(name: "WalletStorage", dependencies: ["CSQLite", "WalletCrypto", "WalletEncoding", "WalletRuntime"]),
        .target(name: "OpenID4VCI", dependencies: ["JOSE", "COSE", "CBOR", "SDJWT", "Mdoc", "WalletStorage", "WalletCrypto", "WalletEncoding", "WalletRuntime"]),
        .target(name: "OpenID4VP", dependencies: ["JOSE", "SDJWT", "Mdoc", "CBOR", "COSE", "WalletStorage", "WalletCrypto",
                                                 "WalletEncoding", "WalletRuntime"]),
        .target(name: "MdocProximity", dependencies: ["Mdoc", "CBOR", "COSE", "WalletCrypto", "WalletEncoding", "WalletRuntime",
                                                    .target(name: "CEpoll", condition: .when(platforms: [.linux]))],
                resources: [.process("Resources")]),
        // epoll and eventfd (Linux), for the TCP carrier's reactor.
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]),
        .target(name: "ReferenceParties", dependencies: ["CMicroHTTPD", "JOSE", "SDJWT", "Mdoc", "COSE", "CBOR", "WalletCrypto", "WalletEncoding", "WalletRuntime"]),

        // Layer 4: the facade an app starts from.
        .target(name: "WalletKit", dependencies: ["OpenID4VCI", "OpenID4VP", "MdocProximity", "WalletStorage", "SDJWT", "Mdoc", "CBOR",
                                                  "WalletCrypto", "WalletEncoding", "WalletRuntime"]),

        // LeakSanitizer's suppressions (third-party, runtime and test-only reports, each with
        // its reason) and, under AddressSanitizer, libcrypto without its exit-time cleanup
        // (see SanitizerDefaults.c), built into the test bundle and the two executables so that
        // `swift test --sanitize=address` and the CLI under AddressSanitizer need no
        // LSAN_OPTIONS. Nothing calls it in other builds.
        .target(name: "CSanitizerDefaults", dependencies: ["COpenSSL"]),

        // Layer 5 (tools): what `wallet inspect` prints, a library so the fuzz targets reach it.
        .target(name: "WalletInspect", dependencies: ["CBOR", "COSE", "WalletCrypto", "WalletEncoding"]),

        .executableTarget(name: "wallet", dependencies: ["CQREncode", "WalletKit", "MdocProximity", "WalletEncoding", "CBOR", "COSE", "JOSE", "SDJWT", "Mdoc",
                                                         "WalletStorage", "OpenID4VCI", "OpenID4VP", "ReferenceParties", "WalletCrypto", "WalletRuntime",
                                                         "WalletInspect", "CSanitizerDefaults"]),
        .executableTarget(name: "wallet-bench", dependencies: ["WalletEncoding", "CBOR", "COSE", "JOSE", "SDJWT", "Mdoc", "WalletStorage", "MdocProximity",
                                                               "OpenID4VCI", "OpenID4VP", "ReferenceParties", "WalletCrypto", "WalletRuntime",
                                                               "COpenSSL", "CSQLite", "CSanitizerDefaults"],
                          path: "Benchmarks/wallet-bench"),

        .testTarget(name: "WalletEncodingTests", dependencies: ["WalletEncoding"]),
        .testTarget(name: "CBORTests", dependencies: ["CBOR", "WalletEncoding"]),
        .testTarget(name: "WalletCryptoTests", dependencies: ["WalletCrypto", "WalletRuntime", "COpenSSL", "WalletEncoding"],
                    exclude: ["Vectors"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "WalletCrypto", "WalletRuntime", "WalletEncoding"], exclude: ["Vectors"]),
        .testTarget(name: "COSETests", dependencies: ["COSE", "CBOR", "WalletCrypto", "WalletEncoding"]),
        .testTarget(name: "SDJWTTests", dependencies: ["SDJWT", "JOSE", "WalletCrypto", "WalletRuntime", "WalletEncoding"], exclude: ["Vectors"]),
        .testTarget(name: "MdocTests", dependencies: ["Mdoc", "CBOR", "COSE", "WalletCrypto", "WalletRuntime", "WalletEncoding"]),
        // Child-process helpers shared by test targets (never a product).
        .target(name: "TestChildProcess", path: "Tests/Support/TestChildProcess"),
        // A forwarding secure area shared by test targets (never a product).
        .target(name: "TestSecureAreas", dependencies: ["WalletStorage", "WalletCrypto"], path: "Tests/Support/TestSecureAreas"),
        .testTarget(name: "WalletStorageTests", dependencies: ["WalletStorage", "JOSE", "WalletCrypto", "WalletRuntime", "CSQLite", "WalletEncoding",
                                                           "TestChildProcess", "TestSecureAreas"], exclude: ["Fixtures"]),
        .testTarget(name: "OpenID4VCITests", dependencies: ["OpenID4VCI", "ReferenceParties", "JOSE", "COSE", "CBOR", "SDJWT", "Mdoc", "WalletStorage", "WalletCrypto",
                                                            "WalletRuntime", "WalletEncoding", "TestSecureAreas"]),
        .testTarget(name: "OpenID4VPTests", dependencies: ["OpenID4VP", "ReferenceParties", "SDJWT", "Mdoc", "CBOR", "COSE", "JOSE",
                                                          "WalletStorage", "WalletCrypto", "WalletRuntime", "WalletEncoding"]),
        .testTarget(name: "ReferencePartiesTests", dependencies: ["ReferenceParties", "CBOR", "COSE", "JOSE", "SDJWT", "Mdoc",
                                                                  "WalletCrypto", "WalletEncoding", "WalletRuntime", "TestChildProcess"]),
        .testTarget(name: "MdocProximityTests", dependencies: ["MdocProximity", "Mdoc", "CBOR", "COSE", "WalletCrypto", "WalletRuntime", "WalletEncoding"]),
        .testTarget(name: "WalletRuntimeTests", dependencies: ["WalletRuntime", "WalletEncoding"]),
        .testTarget(name: "WalletInspectTests", dependencies: ["WalletInspect", "CBOR"]),
        .testTarget(name: "walletTests", dependencies: ["wallet", "WalletKit", "CBOR", "COSE", "JOSE", "Mdoc", "SDJWT", "ReferenceParties", "OpenID4VCI", "OpenID4VP", "WalletStorage",
                                                        "WalletCrypto", "WalletRuntime", "WalletEncoding"]),
        .testTarget(name: "WalletKitTests", dependencies: ["WalletKit", "OpenID4VCI", "OpenID4VP", "MdocProximity", "ReferenceParties",
                                                           "WalletStorage", "SDJWT", "Mdoc", "CBOR", "COSE", "JOSE", "WalletCrypto",
                                                           "WalletRuntime", "WalletEncoding"]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["COpenSSL", "CSQLite", "CSanitizerDefaults"]),
    ],
    swiftLanguageModes: [.v6]
)
