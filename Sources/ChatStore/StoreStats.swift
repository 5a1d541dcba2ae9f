/// Counts reported by `ChatDatabase.stats()`.
public struct StoreStats: Sendable, Hashable {
    public var chats: Int
    /// Messages that are not deleted.
    public var messages: Int
    public var latestChangeSequence: Int64

    public init(chats: Int, messages: Int, latestChangeSequence: Int64) {
        self.chats = chats
        self.messages = messages
        self.latestChangeSequence = latestChangeSequence
    }
}
