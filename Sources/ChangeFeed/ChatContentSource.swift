import ChatModel

/// Where a list loaded without its chats' content (`LiveFeed(chats:options:content:)`) reads that
/// content when rows go out: a snapshot's or a reset's items, a batch's inserts and updates.
///
/// A chat's content is what every member of it sees alike and what the list's order and counters
/// never need: `title`, `createdAt` and `lastMessage`. The live index keeps a chat's order key,
/// counters and `revision` from the start, and its content once a change carried it (a changed
/// chat comes whole) or a snapshot read it. The content read must be the chat's content as of the
/// moment the index reflects (its current `revision`): the store read on the thread that applies
/// the changes is.
public protocol ChatContentSource: AnyObject {
    /// Sets `title`, `createdAt` and `lastMessage` of every chat of `chats` (each has its id and
    /// every other field already), in place.
    ///
    /// Returns false when the content of some chat could not be read: such a chat keeps the
    /// content it has (the index reads it again next time), and the source reports the failure
    /// where its owner sees it (the feed has no error to answer).
    func loadContent(of chats: inout [Chat]) -> Bool
}
