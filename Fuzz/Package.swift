// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets over the SDK's parsers. Built by `Fuzz/run.sh`, which passes
// `-sanitize=fuzzer,address` and `-parse-as-library` (libFuzzer supplies `main`).
// Each target lives in Targets/<Name>/ and defines `LLVMFuzzerTestOneInput`.
let package = Package(
    name: "WalletFuzz",
    dependencies: [.package(name: "WalletSDK", path: "..")],
    targets: [
        .executableTarget(name: "FuzzCBOR", dependencies: [.product(name: "CBOR", package: "WalletSDK")],
                          path: "Targets/FuzzCBOR"),
        .executableTarget(name: "FuzzInspect", dependencies: [.product(name: "WalletInspect", package: "WalletSDK"),
                                                              .product(name: "CBOR", package: "WalletSDK")],
                          path: "Targets/FuzzInspect"),
        .executableTarget(name: "FuzzCOSE", dependencies: [.product(name: "COSE", package: "WalletSDK"),
                                                           .product(name: "WalletCrypto", package: "WalletSDK")],
                          path: "Targets/FuzzCOSE"),
        .executableTarget(name: "FuzzJOSE", dependencies: [.product(name: "JOSE", package: "WalletSDK"),
                                                           .product(name: "WalletCrypto", package: "WalletSDK")],
                          path: "Targets/FuzzJOSE"),
        .executableTarget(name: "FuzzSDJWT", dependencies: [.product(name: "SDJWT", package: "WalletSDK"),
                                                            .product(name: "WalletEncoding", package: "WalletSDK"),
                                                            .product(name: "JOSE", package: "WalletSDK")],
                          path: "Targets/FuzzSDJWT"),
        .executableTarget(name: "FuzzDeviceEngagement", dependencies: [.product(name: "Mdoc", package: "WalletSDK")],
                          path: "Targets/FuzzDeviceEngagement"),
        .executableTarget(name: "FuzzSessionEstablishment", dependencies: [.product(name: "Mdoc", package: "WalletSDK"),
                                                                           .product(name: "WalletCrypto", package: "WalletSDK")],
                          path: "Targets/FuzzSessionEstablishment"),
        .executableTarget(name: "FuzzDeviceRequest", dependencies: [.product(name: "Mdoc", package: "WalletSDK")],
                          path: "Targets/FuzzDeviceRequest"),
        .executableTarget(name: "FuzzDeviceResponse", dependencies: [.product(name: "Mdoc", package: "WalletSDK"),
                                                                     .product(name: "WalletCrypto", package: "WalletSDK")],
                          path: "Targets/FuzzDeviceResponse"),
        .executableTarget(name: "FuzzKeyAttestation", dependencies: [.product(name: "OpenID4VCI", package: "WalletSDK"),
                                                                     .product(name: "WalletCrypto", package: "WalletSDK")],
                          path: "Targets/FuzzKeyAttestation"),
        .executableTarget(name: "FuzzIssuance", dependencies: [.product(name: "OpenID4VCI", package: "WalletSDK"),
                                                               .product(name: "WalletEncoding", package: "WalletSDK")],
                          path: "Targets/FuzzIssuance"),
        .executableTarget(name: "FuzzFormURLEncoding", dependencies: [.product(name: "WalletEncoding", package: "WalletSDK")],
                          path: "Targets/FuzzFormURLEncoding"),
        .executableTarget(name: "FuzzProximityCodecs", dependencies: [.product(name: "MdocProximity", package: "WalletSDK"),
                                                                      .product(name: "CBOR", package: "WalletSDK")],
                          path: "Targets/FuzzProximityCodecs"),
        .executableTarget(name: "FuzzOpenID4VP", dependencies: [.product(name: "OpenID4VP", package: "WalletSDK"),
                                                                .product(name: "WalletEncoding", package: "WalletSDK")],
                          path: "Targets/FuzzOpenID4VP"),
        .executableTarget(name: "FuzzX509", dependencies: [.product(name: "WalletCrypto", package: "WalletSDK")],
                          path: "Targets/FuzzX509"),
    ],
    swiftLanguageModes: [.v6]
)
