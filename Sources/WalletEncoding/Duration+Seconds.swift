extension Duration {
    /// The duration in seconds as a `Double` (the unit of `TimeInterval`, socket and
    /// URLSession timeouts); the SDK's one conversion.
    public var timeInterval: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
