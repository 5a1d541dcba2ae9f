import ChatModel

/// Every chat of the index, by id: the chats in one array (the array the store loaded, taken
/// over without a copy), found through an open-addressing table of 8-byte buckets.
///
/// A `[String: Chat]` of 1,000,000 chats copies every chat into 2²¹ buckets of key and value
/// (≈ 335 bytes a chat) and retains each id and string on the way in; this keeps the chats once,
/// at their stride, and adds 16 bytes a chat of buckets at most.
///
/// Each bucket holds a chat's slot in `chats` (plus one; 0 is an empty bucket) and the low 32
/// bits of its id's hash, which place it (linear probing) and filter the probes before an id is
/// compared. A removed chat's slot holds a placeholder until a new chat reuses it; removals
/// shift the following buckets back, so there are no tombstones.
///
/// Ids compare as `String`s do (canonical equivalence), as a `Dictionary` would.
///
/// A chat may be kept without its content (`title`, `createdAt`, `lastMessage`: see
/// `ChatContentSource`) until a change brings it whole or `setContent` stores it.
@usableFromInline
struct ChatTable {
    /// A chat as the table keeps it, and whether it has its content. A struct, not a tuple: a
    /// tuple's copies go through the runtime's generic witnesses.
    @usableFromInline
    struct StoredChat {
        @usableFromInline var chat: Chat
        @usableFromInline var hasContent: Bool
    }

    /// The chats by slot; a slot in `freeSlots` holds a placeholder.
    @usableFromInline var chats: [Chat]
    /// Whether the chat in each slot has its content (a placeholder counts as having it).
    @usableFromInline var hasContent: [Bool]
    @usableFromInline var freeSlots: [Int32] = []
    /// `UInt64(slot + 1) | UInt64(hash32) << 32`, or 0 for an empty bucket; a power of two long.
    @usableFromInline var buckets: [UInt64]
    @usableFromInline var count: Int

    /// A table of `chats`, which must have distinct ids (a repeated id stops the program), with
    /// their content or, when `withContent` is false, without it.
    ///
    /// The chats go into their buckets in the buckets' order, not the chats': at 1,000,000 chats
    /// the buckets are 16 MiB, and inserting in the chats' order waited on a cache miss for each
    /// (95% of the table's load, about 150 ns a chat). Sorted by home bucket, the inserts sweep
    /// the buckets once. Which bucket a chat lands in may differ from inserting in the chats'
    /// order; a lookup finds it either way (it probes from the home bucket to an empty one).
    ///
    /// - Complexity: O(n): one hash per chat, and an LSD radix sort of the entries by home bucket
    ///   (11 bits a pass: two passes at 1,000,000 chats).
    @usableFromInline
    init(chats: [Chat], withContent: Bool = true) {
        precondition(chats.count < Int(Int32.max), "ChatTable: fewer than 2^31 chats")
        self.chats = chats
        hasContent = [Bool](repeating: withContent, count: chats.count)
        count = chats.count
        buckets = [UInt64](repeating: 0, count: Self.bucketCount(for: chats.count))
        let mask = buckets.count - 1
        // 1. Each chat's bucket entry (its slot and hash), in the chats' order.
        var entries = chats.withUnsafeBufferPointer { chats in
            [UInt64](unsafeUninitializedCapacity: chats.count) { entries, initialized in
                for slot in chats.indices {
                    entries[slot] = UInt64(slot + 1) | UInt64(Self.hash(chats[slot].id)) << 32
                }
                initialized = chats.count
            }
        }
        // 2. The entries in the order of their home buckets.
        Self.sortByHomeBucket(&entries, mask: mask)
        // 3. Linear probing from each home bucket, in bucket order.
        self.chats.withUnsafeBufferPointer { chats in
            buckets.withUnsafeMutableBufferPointer { buckets in
                for entry in entries {
                    let hash = UInt32(truncatingIfNeeded: entry >> 32)
                    var bucket = Int(hash) & mask
                    while buckets[bucket] != 0 {
                        precondition(
                            UInt32(truncatingIfNeeded: buckets[bucket] >> 32) != hash
                                || chats[Int(buckets[bucket] & 0xFFFF_FFFF) - 1].id != chats[Int(entry & 0xFFFF_FFFF) - 1].id,
                            "ChatTable: the id \(chats[Int(entry & 0xFFFF_FFFF) - 1].id) twice")
                        bucket = (bucket + 1) & mask
                    }
                    buckets[bucket] = entry
                }
            }
        }
    }

    /// Sorts bucket entries by their home bucket (`hash & mask`, `mask` one less than a power of
    /// two), stably: a least-significant-digit radix sort, 11 bits a pass.
    static func sortByHomeBucket(_ entries: inout [UInt64], mask: Int) {
        let bits = mask.nonzeroBitCount
        guard entries.count > 1, bits > 0 else { return }
        var other = [UInt64](repeating: 0, count: entries.count)
        var offsets = [Int](repeating: 0, count: 1 << 11)
        var shift = 0
        while shift < bits {
            let digitMask = (1 << min(11, bits - shift)) - 1
            offsets.withUnsafeMutableBufferPointer { offsets in
                for digit in offsets.indices { offsets[digit] = 0 }
                entries.withUnsafeBufferPointer { source in
                    other.withUnsafeMutableBufferPointer { target in
                        for entry in source { offsets[Int(entry >> 32) >> shift & digitMask] += 1 }
                        var start = 0
                        for digit in 0...digitMask {
                            let count = offsets[digit]
                            offsets[digit] = start
                            start += count
                        }
                        for entry in source {
                            let digit = Int(entry >> 32) >> shift & digitMask
                            target[offsets[digit]] = entry
                            offsets[digit] += 1
                        }
                    }
                }
            }
            swap(&entries, &other)
            shift += 11
        }
    }

    /// Buckets for `count` chats: a power of two, at most 3/4 full, at least 16.
    @usableFromInline
    static func bucketCount(for count: Int) -> Int {
        var buckets = 16
        while buckets / 4 * 3 < count { buckets *= 2 }
        return buckets
    }

    @inlinable
    static func hash(_ id: String) -> UInt32 {
        UInt32(truncatingIfNeeded: id.hashValue)
    }

    /// The bucket holding `id`, or nil. O(1) expected.
    @inlinable
    func bucket(of id: String, hash: UInt32) -> Int? {
        buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var bucket = Int(hash) & mask
            while true {
                let entry = buckets[bucket]
                if entry == 0 { return nil }
                if UInt32(truncatingIfNeeded: entry >> 32) == hash,
                   chats.withUnsafeBufferPointer({ $0[Int(entry & 0xFFFF_FFFF) - 1].id == id }) {
                    return bucket
                }
                bucket = (bucket + 1) & mask
            }
        }
    }

    /// The chat with `id` as kept (possibly without its content), if any. O(1) expected.
    @inlinable
    func chat(id: String) -> Chat? {
        guard let slot = slot(of: id) else { return nil }
        return chats[slot]
    }

    /// The slot of the chat with `id`, if any. O(1) expected.
    @inlinable
    func slot(of id: String) -> Int? {
        guard let bucket = bucket(of: id, hash: Self.hash(id)) else { return nil }
        return Int(buckets[bucket] & 0xFFFF_FFFF) - 1
    }

    /// Stores the content of the chat in `slot` (`chat` has its id and every other field).
    @usableFromInline
    mutating func setContent(slot: Int, _ chat: Chat) {
        chats[slot] = chat
        hasContent[slot] = true
    }

    /// Inserts `chat` (whole), or replaces the chat with its id; returns the chat replaced and
    /// whether it had its content. O(1) amortized.
    @usableFromInline
    mutating func update(_ chat: consuming Chat) -> StoredChat? {
        let hash = Self.hash(chat.id)
        if let bucket = bucket(of: chat.id, hash: hash) {
            let slot = Int(buckets[bucket] & 0xFFFF_FFFF) - 1
            // Exchanged in place: the chat replaced is moved out, not copied and released.
            var previous = consume chat
            chats.withUnsafeMutableBufferPointer { swap(&$0[slot], &previous) }
            let hadContent = hasContent[slot]
            hasContent[slot] = true
            return StoredChat(chat: previous, hasContent: hadContent)
        }
        if (count + 1) > buckets.count / 4 * 3 { grow() }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = Int(free)
            chats[slot] = chat
            hasContent[slot] = true
        } else {
            precondition(chats.count < Int(Int32.max) - 1, "ChatTable: fewer than 2^31 chats")
            slot = chats.count
            chats.append(chat)
            hasContent.append(true)
        }
        place(slot: slot, hash: hash)
        count += 1
        return nil
    }

    /// Removes the chat with `id` and returns it and whether it had its content, if any.
    /// O(1) expected.
    @usableFromInline
    mutating func remove(id: String) -> StoredChat? {
        guard var hole = bucket(of: id, hash: Self.hash(id)) else { return nil }
        let slot = Int(buckets[hole] & 0xFFFF_FFFF) - 1
        let removed = StoredChat(chat: chats[slot], hasContent: hasContent[slot])
        chats[slot] = Self.placeholder
        hasContent[slot] = true
        freeSlots.append(Int32(slot))
        count -= 1
        // Backward-shift deletion: move back every following entry whose probe passed the hole.
        buckets.withUnsafeMutableBufferPointer { buckets in
            let mask = buckets.count - 1
            var next = hole
            while true {
                next = (next + 1) & mask
                let entry = buckets[next]
                if entry == 0 { break }
                let home = Int(UInt32(truncatingIfNeeded: entry >> 32)) & mask
                // The entry stays when its home lies cyclically in (hole, next].
                let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
                if stays { continue }
                buckets[hole] = entry
                hole = next
            }
            buckets[hole] = 0
        }
        return removed
    }

    /// What a free slot holds.
    @usableFromInline
    static let placeholder = Chat(id: "", title: "", createdAt: 0, lastMessage: nil, lastMessageDate: 0, unread: 0, revision: 0)

    @usableFromInline
    mutating func place(slot: Int, hash: UInt32) {
        buckets.withUnsafeMutableBufferPointer { buckets in
            let mask = buckets.count - 1
            var bucket = Int(hash) & mask
            while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
            buckets[bucket] = UInt64(slot + 1) | UInt64(hash) << 32
        }
    }

    /// Doubles the buckets and places every entry again (its hash is in its bucket). O(n).
    @usableFromInline
    mutating func grow() {
        let old = buckets
        buckets = [UInt64](repeating: 0, count: old.count * 2)
        for entry in old where entry != 0 {
            place(slot: Int(entry & 0xFFFF_FFFF) - 1, hash: UInt32(truncatingIfNeeded: entry >> 32))
        }
    }
}
