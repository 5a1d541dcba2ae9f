/// Who a session is (docs/PROTOCOL.md, The live feed). Every session is trusted today: the daemon's stdin/stdout and the
/// in-process clients are the backend team's own code. A user-bound kind (a gateway session, one
/// user each) comes with the users and gateway issues.
public enum SessionIdentity: Sendable, Hashable, CustomStringConvertible {
    /// May act as any user, and see `server.stats`.
    case trusted

    public var description: String {
        switch self {
        case .trusted: "trusted"
        }
    }
}
