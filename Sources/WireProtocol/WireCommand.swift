import ChatModel
import JSONCodec

/// A request's method and params, decoded into typed values.
public enum WireCommand: Hashable, Sendable {
    /// `chat.*` and `message.*`: a write, already validated.
    case write(ChatEvent)
    case listChats(ChatsListParams)
    case locateChats(ChatsLocateParams)
    case listMessages(MessagesListParams)
    case members(ChatMembersParams)
    case subscribe(FeedSubscribeParams)
    case ack(FeedAckParams)
    case unsubscribe(FeedUnsubscribeParams)
    case stats
    case version

    /// Decodes `method` and `params`: −32601 for an unknown method, −32602 naming the field for
    /// bad params. `now` (ms) is the default `createdAt`/`editedAt` of writes; `user` is the
    /// acting user (see `requestedUser(method:params:)`), whose state per-member writes change;
    /// `defaultSender` the `sender` of a `message.post` that gives none (nil: it is required).
    public init(
        method: String, params: JSONValue?, now: Int64, user: String = User.defaultID, defaultSender: String? = nil
    ) throws(RPCError) {
        guard let known = WireMethod(rawValue: method) else { throw RPCError.unknownMethod(method) }
        try self.init(known, params: params, now: now, user: user, defaultSender: defaultSender)
    }

    /// Decodes a request's method and params (see `init(method:params:now:user:)`).
    public init(
        _ request: RPCRequest, now: Int64, user: String = User.defaultID, defaultSender: String? = nil
    ) throws(RPCError) {
        guard let known = request.wireMethod else { throw RPCError.unknownMethod(request.method) }
        try self.init(known, params: request.params, now: now, user: user, defaultSender: defaultSender)
    }

    private init(
        _ known: WireMethod, params: JSONValue?, now: Int64, user: String, defaultSender: String?
    ) throws(RPCError) {
        let method = known.rawValue
        do {
            switch known {
            case .chatsList: self = .listChats(try ChatsListParams(params: params))
            case .chatsLocate: self = .locateChats(try ChatsLocateParams(params: params))
            case .messagesList: self = .listMessages(try MessagesListParams(params: params))
            case .chatMembers: self = .members(try ChatMembersParams(params: params))
            case .feedSubscribe: self = .subscribe(try FeedSubscribeParams(params: params))
            case .feedAck: self = .ack(try FeedAckParams(params: params))
            case .feedUnsubscribe: self = .unsubscribe(try FeedUnsubscribeParams(params: params))
            case .serverStats:
                _ = try ParamsReader(params: params, method: method, allowed: [])
                self = .stats
            case .serverVersion:
                _ = try ParamsReader(params: params, method: method, allowed: [])
                self = .version
            case .userCreate, .userRemove, .chatCreate, .chatAddMembers, .chatRemoveMembers, .chatRename, .chatRemove,
                .chatMarkRead, .chatPin, .chatUnpin, .chatSetPinned, .chatArchive, .chatUnarchive, .chatMute, .chatUnmute,
                .messagePost, .messageEdit, .messageDelete:
                guard let event = try ChatEvent.decode(
                    method: known, params: params, now: now, user: user, defaultSender: defaultSender) else {
                    throw RPCError(code: .internalError, message: "internal error: \(method) is not a write")
                }
                self = .write(event)
            }
        } catch let error as ChatError {
            throw RPCError(error)
        } catch {
            throw RPCError(mapping: error)
        }
    }

    /// The `user` param of a method that acts as a user (`WireMethod.takesActingUser`), checked
    /// as an identifier; nil when it is absent or null, or the method takes none (an unknown
    /// method or a misplaced `user` is then the decoding's error). The engine resolves the
    /// acting user from it and the session before it decodes the rest.
    public static func requestedUser(method: String, params: JSONValue?) throws(RPCError) -> String? {
        try requestedUser(method: WireMethod(rawValue: method), params: params)
    }

    /// `requestedUser(method:params:)` of a method already matched (nil: not the protocol's).
    public static func requestedUser(method: WireMethod?, params: JSONValue?) throws(RPCError) -> String? {
        guard method?.takesActingUser == true, case .object(let object)? = params,
              let value = object[WireMethod.userParam], value != .null else { return nil }
        do {
            guard case .string(let user) = value else {
                throw ChatError.invalidParams(field: WireMethod.userParam, reason: "must be a user id (string), not \(value.typeDescription)")
            }
            try Identifier.validate(user, field: WireMethod.userParam)
            return user
        } catch let error as ChatError {
            throw RPCError(error)
        } catch {
            throw RPCError(mapping: error)
        }
    }
}
