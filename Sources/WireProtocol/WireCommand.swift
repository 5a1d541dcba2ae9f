import ChatModel
import JSONCodec

/// A request's method and params, decoded into typed values.
public enum WireCommand: Hashable, Sendable {
    /// `chat.*` and `message.*`: a write, already validated.
    case write(ChatEvent)
    case listChats(ChatsListParams)
    case locateChats(ChatsLocateParams)
    case listMessages(MessagesListParams)
    case subscribe(FeedSubscribeParams)
    case ack(FeedAckParams)
    case unsubscribe(FeedUnsubscribeParams)
    case stats
    case version

    /// Decodes `method` and `params`: −32601 for an unknown method, −32602 naming the field for
    /// bad params. `now` (ms) is the default `createdAt`/`editedAt` of writes.
    public init(method: String, params: JSONValue?, now: Int64) throws(RPCError) {
        guard let known = WireMethod(rawValue: method) else { throw RPCError.unknownMethod(method) }
        do {
            switch known {
            case .chatsList: self = .listChats(try ChatsListParams(params: params))
            case .chatsLocate: self = .locateChats(try ChatsLocateParams(params: params))
            case .messagesList: self = .listMessages(try MessagesListParams(params: params))
            case .feedSubscribe: self = .subscribe(try FeedSubscribeParams(params: params))
            case .feedAck: self = .ack(try FeedAckParams(params: params))
            case .feedUnsubscribe: self = .unsubscribe(try FeedUnsubscribeParams(params: params))
            case .serverStats:
                _ = try ParamsReader(params: params, method: method, allowed: [])
                self = .stats
            case .serverVersion:
                _ = try ParamsReader(params: params, method: method, allowed: [])
                self = .version
            case .chatCreate, .chatRename, .chatRemove, .chatMarkRead, .chatPin, .chatUnpin, .chatSetPinned, .chatArchive,
                .chatUnarchive, .chatMute, .chatUnmute, .messagePost, .messageEdit, .messageDelete:
                guard let event = try ChatEvent.decode(method: known, params: params, now: now) else {
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

    /// Decodes a request's method and params (see `init(method:params:now:)`).
    public init(_ request: RPCRequest, now: Int64) throws(RPCError) {
        try self.init(method: request.method, params: request.params, now: now)
    }
}
