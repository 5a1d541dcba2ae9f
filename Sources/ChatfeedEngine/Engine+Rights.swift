import ChatModel
import ChatStore
import WireProtocol

// The rights of a user session (a gateway connection; docs/PROTOCOL.md, Users and sessions). A
// session of user U may read its own lists, and the messages and members of chats U is a member
// of; post as U to those chats; edit and delete its own messages in chats it is still in; create
// chats (U becomes a member), add members to chats it is in, remove itself from one; rename chats
// it is in; mark read, pin, archive and mute for itself (the acting-user rule keeps those to U's
// own state, and the store finds a chat U is not in not found); its own subscriptions;
// `server.version`. Anything else is −32007 naming the right; a chat U is not in — and a message
// in one — is −32001 not found, so that U does not learn that it exists. Nothing changes on a
// refusal. Ids are the clients' own, so a taken id cannot be hidden: `chat.create` of an existing
// chat and `message.post` with a taken message id are conflicts (−32002), but the conflict a user
// session gets names nothing of the other chat (`shown(to:for:)`).

extension ChatError {
    /// The error as a session of `identity` is told it, for a write of `event`: a user session's
    /// post with a message id taken elsewhere is a conflict that says only that the id is taken
    /// (the store's conflict names the other message's chat, sender, date and whether its text
    /// differs: a trusted session gets that).
    func shown(to identity: SessionIdentity, for event: ChatEvent) -> ChatError {
        guard case .user = identity, case .conflict = self, case .postMessage(let message) = event else { return self }
        return .conflict(
            "message '\(message.id)' already exists with other content: message ids are unique across all chats; a retried post repeats the chat, text and sentAt of the first, a new message needs a new id")
    }
}

extension WireCommand {
    /// The command as a session of `identity` runs it: a chat a user session creates always has
    /// that user among its members.
    func granted(to identity: SessionIdentity) -> WireCommand {
        guard case .user(let own) = identity, case .write(.createChat(let id, let title, let createdAt, let members)) = self,
              !members.contains(own) else { return self }
        return .write(.createChat(id: id, title: title, createdAt: createdAt, members: members + [own]))
    }
}

extension Engine {
    /// Checks `command` against the rights of a session of `user` (a user session; trusted
    /// sessions have every right).
    /// - Throws: −32007 forbidden naming the right, or −32001 for a chat or message `user` may
    ///   not see.
    func checkRights(_ command: WireCommand, of user: String) throws(RPCError) {
        switch command {
        case .listChats, .locateChats, .subscribe, .ack, .unsubscribe, .version, .stats:
            return  // own lists and subscriptions (the acting-user rule and the owner checks)
        case .members(let params):
            try requireMembership(of: user, in: params.chat)
        case .listMessages(let params):
            try requireMembership(of: user, in: params.chat)
        case .write(let event):
            try checkRights(event, of: user)
        }
    }

    private func checkRights(_ event: ChatEvent, of user: String) throws(RPCError) {
        switch event {
        case .createUser, .removeUser, .removeChat:
            return  // trusted only: refused by `authorize` before
        case .createChat:
            return  // the creator is always a member (`granted(to:)`)
        case .addMembers(let chat, _):
            try requireMembership(of: user, in: chat)
        case .removeMembers(let chat, let users):
            try requireMembership(of: user, in: chat)
            if let other = users.first(where: { $0 != user }) {
                throw RPCError(ChatError.forbidden(
                    right: "remove other members",
                    reason: "no right to remove other members: a user session may remove itself from a chat only, not '\(other)'"))
            }
        case .renameChat(let chat, _, _):
            try requireMembership(of: user, in: chat)
        case .markRead, .pinChat, .unpinChat, .setPinned, .moveChat, .setMuted:
            return  // the acting user's own state; the store finds a chat they are not in not found
        case .postMessage(let message):
            try requireMembership(of: user, in: message.chat)
            if message.sender != user {
                throw RPCError(ChatError.forbidden(
                    right: "post as another user",
                    reason: "no right to post as another user: this session posts as '\(user)' only, not as '\(message.sender)'"))
            }
        case .editMessage(let id, _, _), .deleteMessage(let id):
            // A message posted in this round is found once the pending writes commit.
            var owner = try lookUp { try store.messageOwner(id: id) }
            if owner == nil {
                commitPendingWrites()
                owner = try lookUp { try store.messageOwner(id: id) }
            }
            // Another user's deleted message is gone for this session; its own passes, so that a
            // retried delete is `{}` as for a trusted session (and an edit of it not found, by the store).
            guard let owner, !(owner.isDeleted && owner.sender != user), try isMember(user, of: owner.chat) else {
                throw RPCError(ChatError.notFound(kind: "message", id: id))
            }
            if owner.sender != user {
                let right = if case .editMessage = event { "edit another user's message" } else { "delete another user's message" }
                throw RPCError(ChatError.forbidden(
                    right: right, reason: "no right to \(right): message '\(id)' was sent by another user; a session changes its own messages only"))
            }
        }
    }

    /// −32001 chat not found unless `user` is a member of `chat` (after the pending writes, when
    /// not yet: one of them may have made them one; and first, when one of them takes members
    /// out: a user removed in this round must not post, edit or delete once more).
    private func requireMembership(of user: String, in chat: String) throws(RPCError) {
        guard try isMember(user, of: chat) else { throw RPCError(ChatError.notFound(kind: "chat", id: chat)) }
    }

    private func isMember(_ user: String, of chat: String) throws(RPCError) -> Bool {
        if pendingRemovals > 0 { commitPendingWrites() }
        if try lookUp({ try store.chat(id: chat, user: user) }) != nil { return true }
        commitPendingWrites()
        return try lookUp { try store.chat(id: chat, user: user) } != nil
    }

    private func lookUp<T>(_ body: () throws -> T) throws(RPCError) -> T {
        do {
            return try body()
        } catch let error as ChatError {
            throw RPCError(error)
        } catch {
            throw RPCError(code: .internalError, message: "internal error: cannot check the session's rights: \(error)")
        }
    }
}
