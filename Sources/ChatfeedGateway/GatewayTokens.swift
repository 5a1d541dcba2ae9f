import Foundation
import JWTKit

/// Mints and verifies gateway tokens: JWTs signed with HS256 (jwt-kit), whose `sub` is the user
/// id and whose `exp` is required (docs/PROTOCOL.md, The gateway). Any other `alg` is refused.
public struct GatewayTokens: Sendable {
    private let keys: JWTKeyCollection

    /// Tokens signed with `secret`, at least `GatewayOptions.minimumSecretBytes` long
    /// (`GatewayOptions.readSecret` checks it).
    public init(secret: [UInt8]) async {
        precondition(secret.count >= GatewayOptions.minimumSecretBytes, "an HS256 secret needs at least 32 bytes")
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
    }

    /// A token for `user` that expires at `expiresAt`.
    public func mint(user: String, expiresAt: Date) async throws -> String {
        try await keys.sign(GatewayClaims(sub: SubjectClaim(value: user), exp: ExpirationClaim(value: expiresAt)))
    }

    /// The user of a valid token.
    /// - Throws: `TokenRefusal` with a one-line reason (malformed, another algorithm, bad
    ///   signature, expired).
    public func verify(_ token: String) async throws(TokenRefusal) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Self.decodeBase64URL(parts[0]),
              let fields = try? JSONSerialization.jsonObject(with: header) as? [String: Any]
        else { throw TokenRefusal("malformed token: not a JWT (three base64url parts)") }
        guard let alg = fields["alg"] as? String, alg == "HS256" else {
            throw TokenRefusal("token refused: its alg must be HS256, not \(fields["alg"].map { "\($0)" } ?? "missing")")
        }
        do {
            let claims = try await keys.verify(token, as: GatewayClaims.self)
            return claims.sub.value
        } catch let error as JWTError {
            switch error.errorType {
            case .signatureVerificationFailed: throw TokenRefusal("bad token signature")
            case .claimVerificationFailure:
                if error.failedClaim is ExpirationClaim { throw TokenRefusal("token expired") }
                throw TokenRefusal("token refused: \(error.reason ?? "a claim is invalid")")
            default: throw TokenRefusal("malformed token: \(error.reason ?? "\(error.errorType)")")
            }
        } catch {
            // A payload without `sub` or `exp`, or with a claim of the wrong type.
            throw TokenRefusal("malformed token: it needs a string sub and a numeric exp")
        }
    }

    private static func decodeBase64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// A token that is not accepted, with the one-line reason the 401 carries.
public struct TokenRefusal: Error, CustomStringConvertible, Sendable, Equatable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// The claims of a gateway token.
struct GatewayClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}
