// swift-tools-version:6.0
import PackageDescription

// Layer 0 of the wallet SDK (see ../shared/DESIGN.md): system libraries, CBOR,
// crypto over OpenSSL 3 with X.509, and the runtime seams. Higher layers are added
// module by module as they gain code.
let package = Package(
    name: "WalletSDK",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "CBOR", targets: ["CBOR"]),
        .library(name: "WalletCrypto", targets: ["WalletCrypto"]),
        .library(name: "WalletRuntime", targets: ["WalletRuntime"]),
        .executable(name: "wallet", targets: ["wallet"]),
        .executable(name: "wallet-bench", targets: ["wallet-bench"]),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),

        .target(name: "CBOR"),
        .target(name: "WalletRuntime"),
        .target(name: "WalletCrypto", dependencies: ["COpenSSL"]),

        .executableTarget(name: "wallet", dependencies: ["CBOR", "WalletCrypto", "WalletRuntime"]),
        .executableTarget(name: "wallet-bench", dependencies: ["CBOR", "WalletCrypto"],
                          path: "Benchmarks/wallet-bench"),

        .testTarget(name: "CBORTests", dependencies: ["CBOR"]),
        .testTarget(name: "WalletCryptoTests", dependencies: ["WalletCrypto", "WalletRuntime", "COpenSSL"]),
        .testTarget(name: "WalletRuntimeTests", dependencies: ["WalletRuntime"]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["COpenSSL", "CSQLite"]),
    ],
    swiftLanguageModes: [.v6]
)
