import ChatfeedGateway

extension ChatfeedConfiguration {
    /// The gateway's options for `chatfeedd --listen HOST:PORT`, with the secret read from
    /// `tokenSecretFile`.
    /// - Throws: `GatewayError` naming a bad address or a secret that cannot be read.
    public func gatewayOptions(listen: String) throws(GatewayError) -> GatewayOptions {
        let (host, port) = try GatewayOptions.parseListenAddress(listen)
        return GatewayOptions(
            host: host, port: port, tokenSecret: try GatewayOptions.readSecret(file: tokenSecretFile),
            pingIntervalSeconds: Double(pingIntervalSeconds), maxConnections: maxConnections, devTokens: devTokens,
            webRoot: webRoot)
    }
}
