// swift-tools-version:6.0
import PackageDescription

// The wallet SDK (see ../shared/DESIGN.md for the layers). Layer 0: system
// libraries, CBOR, crypto over OpenSSL 3 with X.509, the runtime seams; layer 1:
// JOSE and COSE; layer 2: SD-JWT VC, mdoc, storage; layer 3: mdoc proximity. Higher layers are added
// module by module as they gain code.
let package = Package(
    name: "WalletSDK",
    defaultLocalization: "en",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "CBOR", targets: ["CBOR"]),
        .library(name: "WalletCrypto", targets: ["WalletCrypto"]),
        .library(name: "WalletRuntime", targets: ["WalletRuntime"]),
        .library(name: "JOSE", targets: ["JOSE"]),
        .library(name: "COSE", targets: ["COSE"]),
        .library(name: "SDJWT", targets: ["SDJWT"]),
        .library(name: "Mdoc", targets: ["Mdoc"]),
        .library(name: "WalletStorage", targets: ["WalletStorage"]),
        .library(name: "MdocProximity", targets: ["MdocProximity"]),
        .executable(name: "wallet", targets: ["wallet"]),
        .executable(name: "wallet-bench", targets: ["wallet-bench"]),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        .target(name: "CBOR"),
        .target(name: "WalletRuntime"),
        .target(name: "WalletCrypto", dependencies: ["COpenSSL"]),
        .target(name: "JOSE", dependencies: ["WalletCrypto", "WalletRuntime", "CZlib"]),
        .target(name: "COSE", dependencies: ["CBOR", "WalletCrypto"]),
        .target(name: "SDJWT", dependencies: ["JOSE", "WalletCrypto", "WalletRuntime"]),
        .target(name: "Mdoc", dependencies: ["CBOR", "COSE", "WalletCrypto", "WalletRuntime"]),
        .target(name: "WalletStorage", dependencies: ["CSQLite", "COpenSSL", "JOSE", "WalletCrypto", "WalletRuntime"]),
        .target(name: "MdocProximity", dependencies: ["Mdoc", "CBOR", "COSE", "WalletCrypto", "WalletRuntime"],
                resources: [.process("Resources")]),

        .executableTarget(name: "wallet", dependencies: ["CBOR", "COSE", "JOSE", "SDJWT", "Mdoc", "WalletStorage",
                                                         "WalletCrypto", "WalletRuntime"]),
        .executableTarget(name: "wallet-bench", dependencies: ["CBOR", "COSE", "JOSE", "SDJWT", "Mdoc", "WalletStorage", "MdocProximity",
                                                               "WalletCrypto", "WalletRuntime"],
                          path: "Benchmarks/wallet-bench"),

        .testTarget(name: "CBORTests", dependencies: ["CBOR"]),
        .testTarget(name: "WalletCryptoTests", dependencies: ["WalletCrypto", "WalletRuntime", "COpenSSL"],
                    exclude: ["Vectors"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "WalletCrypto", "WalletRuntime"], exclude: ["Vectors"]),
        .testTarget(name: "COSETests", dependencies: ["COSE", "CBOR", "WalletCrypto"]),
        .testTarget(name: "SDJWTTests", dependencies: ["SDJWT", "JOSE", "WalletCrypto", "WalletRuntime"], exclude: ["Vectors"]),
        .testTarget(name: "MdocTests", dependencies: ["Mdoc", "CBOR", "COSE", "WalletCrypto", "WalletRuntime"]),
        .testTarget(name: "WalletStorageTests", dependencies: ["WalletStorage", "JOSE", "WalletCrypto", "WalletRuntime", "CSQLite"], exclude: ["Fixtures"]),
        .testTarget(name: "MdocProximityTests", dependencies: ["MdocProximity", "Mdoc", "CBOR", "WalletCrypto", "WalletRuntime"]),
        .testTarget(name: "WalletRuntimeTests", dependencies: ["WalletRuntime"]),
        .testTarget(name: "walletTests", dependencies: ["wallet", "CBOR", "COSE", "JOSE", "Mdoc", "SDJWT", "WalletCrypto", "WalletRuntime"]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["COpenSSL", "CSQLite"]),
    ],
    swiftLanguageModes: [.v6]
)
