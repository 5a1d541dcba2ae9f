/// Who a session is (docs/PROTOCOL.md, Users and sessions): what it may do, and which user its
/// requests act as.
public enum SessionIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The backend team's own code (the daemon's stdin/stdout, in-process clients, the CLI): acts
    /// as any user (the `user` param, default `EngineOptions.defaultUser`), creates and removes
    /// users, posts for any sender and sees `server.stats`.
    case trusted
    /// One user's session (a gateway connection, the `sub` of its token): every request acts as
    /// that user; a `user` param naming anyone else is −32007 forbidden, and so are the methods
    /// for trusted sessions only.
    case user(String)

    /// The user every request of the session acts as, when the session is bound to one.
    public var boundUser: String? {
        switch self {
        case .trusted: nil
        case .user(let id): id
        }
    }

    public var description: String {
        switch self {
        case .trusted: "trusted"
        case .user(let id): "user \(id)"
        }
    }
}
