import ArgumentParser
import ChatfeedConfig
import ChatfeedGateway
import Foundation

/// `chatfeed token --user U [--ttl 1h]`: mints a gateway token (HS256, `sub` = the user, `exp`)
/// with the configured secret (`tokenSecretFile`), for development and tests; production tokens
/// come from the team's own sign-in service. Prints the token alone on stdout.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mint a gateway token for a user (development and tests).",
        discussion: "Signed with the secret in the configuration's tokenSecretFile (or --secret-file). The gateway accepts it in 'Authorization: Bearer <token>' or '?access_token=<token>' until it expires.")

    @Option(help: ArgumentHelp("The user the token is for (its sub).", valueName: "id"))
    var user: String

    @Option(help: ArgumentHelp("How long it is valid: seconds, or a number with s, m, h or d (default 1h).", valueName: "duration"))
    var ttl: String = "1h"

    @Option(name: .customLong("secret-file"), help: ArgumentHelp("The secret file (default: tokenSecretFile of the configuration).", valueName: "file"))
    var secretFile: String?

    @Option(name: .long, help: ArgumentHelp("A configuration file (JSON).", valueName: "file"))
    var config: String?

    func run() async throws {
        guard let seconds = Self.seconds(ttl), seconds > 0 else {
            throw CLIFailure(message: "--ttl '\(ttl)' is not a positive duration such as 3600, 90s, 15m, 1h or 7d")
        }
        guard !user.isEmpty else { throw CLIFailure(message: "--user must not be empty") }
        let secret: [UInt8]
        do {
            let file = try secretFile ?? ChatfeedConfiguration.load(file: config).tokenSecretFile
            secret = try GatewayOptions.readSecret(file: file)
        } catch {
            throw CLIFailure(message: "\(error)")
        }
        let tokens = await GatewayTokens(secret: secret)
        output(try await tokens.mint(user: user, expiresAt: Date().addingTimeInterval(seconds)))
    }

    /// `90`, `90s`, `15m`, `1h`, `7d` in seconds.
    static func seconds(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let last = text.last, let unit = units[last] { return Double(text.dropLast()).map { $0 * unit } }
        return Double(text)
    }
}
