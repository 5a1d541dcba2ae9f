import ChatModel
import ChatStore
import JSONCodec
import WireProtocol

// Every request acts as a user (docs/PROTOCOL.md, Users and sessions). This is the one place that
// says which, and whether the session may: `actingUser(of:in:)` resolves the user from the
// session and the `user` param, `authorize(_:as:identity:)` checks the rights of the session.

extension Engine {
    /// The most users `knownUsers` holds; past it the set starts over.
    static let knownUsersLimit = 4096

    /// The user `request` acts as, given the `user` it names (`requested`, decoded by the sender:
    /// `PreparedCommand`): a trusted session's `user` param (the configured
    /// `defaultUser` when absent), or a user session's own user (not looked up: the cache of
    /// known users serves trusted sessions only, so that any number of gateway users never
    /// makes it start over and commit the pending writes early).
    ///
    /// - Throws: −32602 for an invalid `user`, −32007 forbidden when a user session names
    ///   another user, −32001 not found when a method that acts as a user names one who does not
    ///   exist (`user.create` and `user.remove` name their target instead, checked by the store).
    func actingUser(of request: RPCRequest, requested: String?, in session: Session) throws(RPCError) -> String {
        let user: String
        switch session.identity {
        case .trusted:
            user = requested ?? options.defaultUser
        case .user(let own):
            if let requested, requested != own {
                throw RPCError(ChatError.forbidden(
                    right: "act as another user",
                    reason: "this session acts as '\(own)' only; it may not act as '\(requested)' (leave out 'user')"))
            }
            // Its user existed when it connected (the token's `sub` was checked); the engine's own
            // removals since are marked on the session (`userRemoved(_:)`). Its first request,
            // and its next after another process committed (`otherWriterCommitted()`), look the
            // user up once, without committing the pending writes: a removal among them marks it
            // at commit. (A user removed elsewhere and created again by a pending write is found
            // removed, and the session stays so, as after any removal.)
            let actsAsUser = request.wireMethod?.takesActingUser == true
            if session.userUnverified, actsAsUser {
                if !(try storeHasUser(own)) { session.userRemoved = true }
                session.userUnverified = false
            }
            if session.userRemoved, actsAsUser {
                throw RPCError(ChatError.notFound(kind: "user", id: own))
            }
            return own
        }
        if request.wireMethod?.takesActingUser == true, !(try userExists(user)) {
            throw RPCError(ChatError.notFound(kind: "user", id: user))
        }
        return user
    }

    /// Whether `user` exists: known when seen since another process last committed
    /// (`otherWriterCommitted()`); otherwise looked up in the store, where the committed users
    /// answer without a commit (a commit per user would split the group commits whenever another
    /// process writes steadily), except after a pending removal; a user not found there is looked
    /// up again after the pending writes commit (one of them may create them).
    private func userExists(_ user: String) throws(RPCError) -> Bool {
        if knownUsers.contains(user) { return true }
        if pendingRemovals > 0 { commitPendingWrites() }
        if !(try storeHasUser(user)) {
            commitPendingWrites()
            guard try storeHasUser(user) else { return false }
        }
        if knownUsers.count >= Self.knownUsersLimit { knownUsers.removeAll() }
        knownUsers.insert(user)
        return true
    }

    /// Whether the store has `user` (committed writes only).
    private func storeHasUser(_ user: String) throws(RPCError) -> Bool {
        do {
            return try store.user(id: user) != nil
        } catch {
            throw RPCError(code: .internalError, message: "internal error: cannot read the user '\(user)': \(error)")
        }
    }

    /// Checks that a session with `identity`, acting as `user`, may run `command`: the methods
    /// for trusted sessions only (`user.create`, `user.remove`, `chat.remove`, `server.stats`)
    /// are forbidden to user sessions. The finer rights of user sessions (docs/PROTOCOL.md,
    /// Users and sessions: members only, own messages…) are checked here too.
    ///
    /// - Throws: −32007 forbidden, saying which right the session lacks; nothing changes.
    func authorize(_ command: WireCommand, as user: String, identity: SessionIdentity) throws(RPCError) {
        guard case .user = identity else { return }
        let trustedOnly: String? = switch command {
        case .write(.createUser): "user.create"
        case .write(.removeUser): "user.remove"
        case .write(.removeChat): "chat.remove"
        case .stats: "server.stats"
        default: nil
        }
        if let method = trustedOnly {
            throw RPCError(ChatError.forbidden(
                right: method, reason: "\(method) is for trusted sessions only (the backend's own services)"))
        }
        try checkRights(command, of: user)  // Engine+Rights.swift
    }

    /// Another process committed, and may have removed users (`chatfeed user remove`): the
    /// users known to exist are looked up again, each user session's at its next request that
    /// acts as its user.
    /// - Complexity: O(s) for s open sessions, once per look that finds another writer's commit.
    func otherWriterCommitted() {
        knownUsers.removeAll(keepingCapacity: true)
        for session in sessions.values where session.identity != .trusted { session.userUnverified = true }
    }

    /// Forgets a user removed by a committed write, and marks their user sessions.
    /// - Complexity: O(s) for s open sessions (removals are rare).
    func userRemoved(_ user: String) {
        knownUsers.remove(user)
        for session in sessions.values where session.identity == .user(user) { session.userRemoved = true }
    }
}
