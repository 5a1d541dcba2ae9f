import ChatModel
import Testing
import TestSupport

@_spi(Testing) import ChangeFeed

/// Checks a set against a sorted, duplicate-free reference array through the whole public API.
private func expectMatches<E: Comparable>(
    _ set: RankedSet<E>, _ reference: [E], probes: [E] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(set.invariantViolations() == [], sourceLocation: sourceLocation)
    #expect(set.count == reference.count, sourceLocation: sourceLocation)
    #expect(set.isEmpty == reference.isEmpty, sourceLocation: sourceLocation)
    #expect(Array(set) == reference, sourceLocation: sourceLocation)
    #expect(set.first == reference.first, sourceLocation: sourceLocation)
    #expect(set.last == reference.last, sourceLocation: sourceLocation)
    for (rank, element) in reference.enumerated() {
        #expect(set.element(at: rank) == element, sourceLocation: sourceLocation)
        #expect(set.rank(of: element) == rank, sourceLocation: sourceLocation)
        #expect(set.contains(element), sourceLocation: sourceLocation)
    }
    for probe in probes {
        let expectedRank = reference.firstIndex { !($0 < probe) } ?? reference.count
        #expect(set.rank(of: probe) == expectedRank, "rank(of: \(probe))", sourceLocation: sourceLocation)
        let present = expectedRank < reference.count && !(probe < reference[expectedRank])
        #expect(set.contains(probe) == present, "contains(\(probe))", sourceLocation: sourceLocation)
    }
}

/// Inserts into / removes from a sorted reference array the slow, obvious way.
private func referenceInsert<E: Comparable>(_ reference: inout [E], _ element: E) -> Bool {
    let i = reference.firstIndex { !($0 < element) } ?? reference.count
    if i < reference.count && !(element < reference[i]) { return false }
    reference.insert(element, at: i)
    return true
}

private func referenceRemove<E: Comparable>(_ reference: inout [E], _ element: E) -> Bool {
    let i = reference.firstIndex { !($0 < element) } ?? reference.count
    if i < reference.count && !(element < reference[i]) {
        reference.remove(at: i)
        return true
    }
    return false
}

@Suite struct RankedSetTests {
    // MARK: Basics

    @Test func emptySet() {
        let set = RankedSet<Int>()
        expectMatches(set, [], probes: [-1, 0, 1])
        #expect(set.elements(from: 0, count: 10) == [])
        #expect(Array(set.elements(from: 0)) == [])
        #expect(set.rank(of: 42) == 0)
        #expect(set.first == nil && set.last == nil)
    }

    @Test func insertRemoveReturnValues() {
        var set = RankedSet<Int>()
        #expect(set.insert(5) == true)
        #expect(set.insert(5) == false)
        #expect(set.insert(3) == true)
        #expect(set.insert(9) == true)
        #expect(set.count == 3)
        #expect(set.remove(4) == false)
        #expect(set.remove(5) == true)
        #expect(set.remove(5) == false)
        #expect(Array(set) == [3, 9])
        #expect(set.rank(of: 5) == 1)
        #expect(set.rank(of: 100) == 2)
        #expect(set.rank(of: -100) == 0)
        #expect(set.remove(at: 1) == 9)
        #expect(Array(set) == [3])
        set.removeAll()
        expectMatches(set, [])
        #expect(set.insert(1) == true)
        expectMatches(set, [1])
    }

    // MARK: Exhaustive on small sizes

    /// Every subset of a universe of 10 values, built by inserting in every one of several orders,
    /// then reduced by removing each member, with tiny blocks so that splits and merges happen.
    @Test(arguments: [4, 5, 8])
    func allSubsetsOfSmallUniverse(blockSize: Int) {
        let universe = Array(0..<10).map { $0 * 2 }  // probes at odd values fall between members
        let probes = Array(-1...19)
        for mask in 0..<(1 << universe.count) {
            let members = universe.indices.filter { mask & (1 << $0) != 0 }.map { universe[$0] }
            // Ascending, descending and an interleaved order.
            let orders = [members, members.reversed(), members.enumerated().sorted { ($0.offset % 3, $0.offset) < ($1.offset % 3, $1.offset) }.map(\.element)]
            for order in orders {
                var set = RankedSet<Int>(blockSize: blockSize)
                for value in order { #expect(set.insert(value) == true) }
                for value in order { #expect(set.insert(value) == false) }
                expectMatches(set, members, probes: probes)
            }
            let bulk = RankedSet<Int>(sorted: members, blockSize: blockSize)
            expectMatches(bulk, members, probes: probes)
            // Remove each member from the bulk-loaded set.
            for value in members {
                var copy = bulk
                #expect(copy.remove(value) == true)
                #expect(copy.remove(value) == false)
                expectMatches(copy, members.filter { $0 != value }, probes: probes)
            }
            // Remove everything, front to back, and back to front, checking at each step.
            for removalOrder in [members, members.reversed()] {
                var set = bulk
                var reference = members
                for value in removalOrder {
                    #expect(set.remove(value) == true)
                    reference.removeAll { $0 == value }
                    expectMatches(set, reference)
                }
                #expect(set.isEmpty)
            }
            // A copy is independent of the original (value semantics).
            #expect(Array(bulk) == members)
        }
    }

    /// Every sequence of 6 operations over a universe of 3 values (insert or remove of each value:
    /// 6^6 = 46,656 sequences), checking the result after every operation.
    @Test func everyShortOperationSequence() {
        let operations: [(insert: Bool, value: Int)] = [0, 1, 2].flatMap { [(true, $0), (false, $0)] }
        let length = 6
        var total = 1
        for _ in 0..<length { total *= operations.count }
        for code in 0..<total {
            var set = RankedSet<Int>(blockSize: 4)
            var reference: [Int] = []
            var rest = code
            for _ in 0..<length {
                let op = operations[rest % operations.count]
                rest /= operations.count
                if op.insert {
                    #expect(set.insert(op.value) == referenceInsert(&reference, op.value))
                } else {
                    #expect(set.remove(op.value) == referenceRemove(&reference, op.value))
                }
                #expect(set.count == reference.count)
            }
            #expect(set.invariantViolations() == [])
            #expect(Array(set) == reference)
            for value in -1...3 {
                #expect(set.rank(of: value) == (reference.firstIndex { $0 >= value } ?? reference.count))
            }
        }
    }

    // MARK: Randomized against a sorted array

    @Test(arguments: [
        (seed: UInt64(1), blockSize: 4, universe: 200, steps: 4_000),
        (seed: 2, blockSize: 6, universe: 1_000, steps: 6_000),
        (seed: 3, blockSize: 16, universe: 5_000, steps: 10_000),
        (seed: 4, blockSize: 512, universe: 50_000, steps: 30_000),
    ])
    func randomOperationsAgainstReference(seed: UInt64, blockSize: Int, universe: Int, steps: Int) {
        var rng = SeededGenerator(seed: seed)
        var set = RankedSet<Int>(blockSize: blockSize)
        var reference: [Int] = []
        var maxBlocks = 0
        for step in 0..<steps {
            // Phases: mostly inserts, then mixed, then mostly removals, so the set grows past many
            // splits and shrinks through many merges.
            let phase = step * 3 / steps
            let insertChance = [0.8, 0.5, 0.2][phase]
            let value = Int.random(in: 0..<universe, using: &rng)
            switch Double.random(in: 0..<1, using: &rng) {
            case ..<insertChance where step % 2 == 0:
                #expect(set.insert(value) == referenceInsert(&reference, value))
            case ..<insertChance:
                // The reporting insert: the rank the value has after it, nil when present.
                let expected = reference.contains(value) ? nil : reference.firstIndex { $0 > value } ?? reference.count
                #expect(set.insertReportingRank(value) == expected)
                _ = referenceInsert(&reference, value)
            case ..<(insertChance + 0.05) where !reference.isEmpty:
                let rank = Int.random(in: 0..<reference.count, using: &rng)
                #expect(set.remove(at: rank) == reference.remove(at: rank))
            default:
                // Remove a member most of the time, a random (maybe absent) value otherwise.
                let target = !reference.isEmpty && Bool.random(using: &rng)
                    ? reference[Int.random(in: 0..<reference.count, using: &rng)] : value
                if step % 2 == 0 {
                    #expect(set.remove(target) == referenceRemove(&reference, target))
                } else {
                    // The reporting removal: the rank the value had, nil when absent.
                    #expect(set.removeReportingRank(target) == reference.firstIndex(of: target))
                    _ = referenceRemove(&reference, target)
                }
            }
            #expect(set.count == reference.count)
            if !reference.isEmpty {
                let rank = Int.random(in: 0..<reference.count, using: &rng)
                #expect(set.element(at: rank) == reference[rank])
                #expect(set.rank(of: reference[rank]) == rank)
                let window = Int.random(in: 0...60, using: &rng)
                let expected = Array(reference[rank..<min(reference.count, rank + window)])
                #expect(set.elements(from: rank, count: window) == expected)
                #expect(Array(set.elements(from: rank).prefix(window)) == expected)
            }
            let probe = Int.random(in: -1...universe, using: &rng)
            #expect(set.rank(of: probe) == (reference.firstIndex { $0 >= probe } ?? reference.count))
            #expect(set.contains(probe) == reference.contains(probe))
            maxBlocks = max(maxBlocks, set.blockSizes.count)
            if step % 97 == 0 {
                // Buffers never grow past about twice the largest block (2 × blockSize + 1), plus
                // whatever the allocator rounds up.
                let limit = 2 * blockSize + 1 + 16
                #expect(set.blockCapacities.allSatisfy { $0 <= limit }, "capacities \(set.blockCapacities.max() ?? 0) > \(limit)")
            }
            if step % 500 == 0 { #expect(set.invariantViolations() == []) }
        }
        expectMatches(set, reference)
        if blockSize < 100 {
            #expect(maxBlocks > 10, "the run should have split blocks many times")
        }
    }

    /// Blocks move their elements on inserts, removals, splits and merges, and copy the ones a
    /// copy of the set shares: every element that is no longer in any set must be released
    /// exactly once, and none of those still in one (elements are objects that count themselves).
    @Test(arguments: [(seed: UInt64(11), blockSize: 4), (seed: 12, blockSize: 5), (seed: 13, blockSize: 16)])
    func elementsAreReleasedOnceAndOnlyWhenGone(seed: UInt64, blockSize: Int) {
        let live = LiveCount()
        var rng = SeededGenerator(seed: seed)
        // Bulk-loaded first (blocks filled from their end), then mutated.
        var reference = Array(stride(from: 0, to: 400, by: 3))
        var set = RankedSet(sorted: reference.map { Tracked($0, live) }, blockSize: blockSize)
        var copies: [(set: RankedSet<Tracked>, values: [Int])] = []
        var snapshot: (elements: RankedSet<Tracked>.Elements, values: [Int])? = nil
        for step in 0..<3_000 {
            let value = Int.random(in: 0..<400, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                if referenceInsert(&reference, value) {
                    #expect(set.insertReportingRank(Tracked(value, live)) != nil)
                } else {
                    #expect(set.insert(Tracked(value, live)) == false)
                }
            case 5..<8 where !reference.isEmpty:
                let rank = Int.random(in: 0..<reference.count, using: &rng)
                #expect(set.remove(at: rank).value == reference.remove(at: rank))
            case 8:
                #expect(set.remove(Tracked(value, live)) == referenceRemove(&reference, value))
            default:
                // A copy or a snapshot that later mutations of `set` must leave as it is.
                if Bool.random(using: &rng) {
                    copies.append((set, reference))
                    if copies.count > 3 { copies.removeFirst() }
                } else {
                    snapshot = (set.elements(from: 0), reference)
                }
            }
            if step % 50 == 0 {
                #expect(set.map(\.value) == reference)
                for copy in copies { #expect(copy.set.map(\.value) == copy.values) }
                if let snapshot { #expect(snapshot.elements.map(\.value) == snapshot.values) }
                // Every element alive is in the set, a copy or the snapshot.
                var held = Set(reference)
                for copy in copies { held.formUnion(copy.values) }
                let distinct = Set(([set] + copies.map(\.set)).flatMap { $0.map(ObjectIdentifier.init) }
                    + (snapshot.map { Array($0.elements) } ?? []).map(ObjectIdentifier.init))
                #expect(live.count == distinct.count, "step \(step): \(live.count) alive, \(distinct.count) held")
                #expect(Set(([set] + copies.map(\.set)).flatMap { $0.map(\.value) }).isSubset(of: held.union(snapshot?.values ?? [])))
            }
        }
        set = RankedSet(blockSize: blockSize)
        copies = []
        snapshot = nil
        #expect(live.count == 0)
    }

    /// Inserts that alternate between a block's two ends, with removals between them, in blocks of
    /// every fill: each end's room runs out in turn and the elements move to make some.
    @Test func insertsAtBothEndsOfABlock() {
        for blockSize in [4, 16, 64] {
            var set = RankedSet(sorted: [0], blockSize: blockSize)
            var reference = [0]
            var low = 0
            var high = 0
            var rng = SeededGenerator(seed: UInt64(blockSize))
            for step in 0..<2_000 {
                if step % 3 == 2 {
                    let rank = Int.random(in: 0..<reference.count, using: &rng)
                    #expect(set.remove(at: rank) == reference.remove(at: rank))
                } else if step % 2 == 0 {
                    low -= 1
                    #expect(set.insertReportingRank(low) == 0)
                    reference.insert(low, at: 0)
                } else {
                    high += 1
                    #expect(set.insertReportingRank(high) == reference.count)
                    reference.append(high)
                }
                if step % 100 == 0 { #expect(set.invariantViolations() == []) }
            }
            expectMatches(set, reference)
        }
    }

    @Test func splitsAndMergesHappen() {
        var set = RankedSet<Int>(blockSize: 4)
        for value in 0..<100 { set.insert(value) }
        #expect(set.invariantViolations() == [])
        #expect(set.blockSizes.allSatisfy { $0 <= 8 })
        #expect(set.blockSizes.count >= 100 / 8)
        // Remove most; blocks must merge (no block under 2 unless it is the only one).
        for value in 0..<100 where value % 10 != 0 { set.remove(value) }
        #expect(set.invariantViolations() == [])
        #expect(Array(set) == Array(stride(from: 0, to: 100, by: 10)))
        #expect(set.blockSizes.count <= 4)
        // Insertions at the front only, then removals at the back only (the feed's bump pattern).
        var reference = Array(set)
        for value in stride(from: -1, to: -200, by: -1) {
            #expect(set.insert(value) == true)
            reference.insert(value, at: 0)
            let removed = set.remove(at: set.count - 1)
            #expect(removed == reference.removeLast())
        }
        expectMatches(set, reference)
    }

    // MARK: Bulk load

    @Test(arguments: [0, 1, 7, 8, 9, 511, 512, 513, 1_024, 5_000])
    func bulkLoadThenMutate(size: Int) {
        for blockSize in [4, 512] {
            var rng = SeededGenerator(seed: UInt64(size * 31 + blockSize))
            var reference = Array(0..<size).map { $0 * 3 }
            var set = RankedSet(sorted: reference, blockSize: blockSize)
            expectMatches(set, reference, probes: [-1, 0, 1, size * 3, size * 3 - 3])
            #expect(set.blockSizes.dropLast().allSatisfy { $0 == blockSize })
            for _ in 0..<300 {
                let value = Int.random(in: -5...(size * 3 + 5), using: &rng)
                if Bool.random(using: &rng) {
                    #expect(set.insert(value) == referenceInsert(&reference, value))
                } else {
                    #expect(set.remove(value) == referenceRemove(&reference, value))
                }
            }
            expectMatches(set, reference)
        }
        let defaultLoaded = RankedSet(sorted: 0..<size)
        expectMatches(defaultLoaded, Array(0..<size))
    }

    /// A set loaded by moving the elements out of a buffer holds each once: none copied (one more
    /// alive), none released twice (one fewer, or a crash), the same set as a copying load, and
    /// it mutates like one.
    @Test(arguments: [0, 1, 7, 8, 9, 511, 512, 513, 1_024])
    func bulkLoadByMoving(size: Int) {
        for blockSize in [4, 5, 256] {
            let live = LiveCount()
            var rng = SeededGenerator(seed: UInt64(size * 17 + blockSize))
            var reference = Array(0..<size).map { $0 * 3 }
            let buffer = UnsafeMutableBufferPointer<Tracked>.allocate(capacity: size)
            _ = buffer.initialize(from: reference.map { Tracked($0, live) })
            var set = RankedSet(movingSorted: buffer, blockSize: blockSize)
            buffer.deallocate()
            #expect(live.count == size)
            #expect(set.map(\.value) == reference)
            #expect(set.blockSizes.dropLast().allSatisfy { $0 == blockSize })
            #expect(set.blockSizes == RankedSet(sorted: reference, blockSize: blockSize).blockSizes)
            mutateRandomly(&set, &reference, values: -5...(size * 3 + 5), live: live, using: &rng)
            #expect(set.map(\.value) == reference)
            #expect(live.count == reference.count)
            set = RankedSet(blockSize: blockSize)
            #expect(live.count == 0)
        }
    }

    @Test func bulkLoadFromLazySequence() {
        // A sequence with no count estimate.
        let lazy = (0..<2_000).lazy.filter { $0 % 2 == 1 }
        let set = RankedSet(sorted: lazy)
        expectMatches(set, Array(lazy))
    }

    /// A block that holds the last elements the estimate promised is allocated to their number;
    /// a sequence that holds more than it promised still loads whole, and mutates correctly.
    @Test(arguments: [0, 1, 3, 10, 300, 1_000])
    func bulkLoadWithAShortEstimate(promised: Int) {
        for (size, blockSize) in [(10, 256), (300, 256), (1_000, 256), (1_000, 4), (9, 4)] {
            let elements = Array(0..<size).map { $0 * 2 }
            var set = RankedSet(sorted: ShortEstimate(elements: elements, promised: min(promised, size)), blockSize: blockSize)
            var reference = elements
            expectMatches(set, reference)
            var rng = SeededGenerator(seed: UInt64(size + promised))
            for _ in 0..<200 {
                let value = Int.random(in: -3...(size * 2 + 3), using: &rng)
                if Bool.random(using: &rng) {
                    #expect(set.insert(value) == referenceInsert(&reference, value))
                } else {
                    #expect(set.remove(value) == referenceRemove(&reference, value))
                }
            }
            expectMatches(set, reference)
        }
    }

    @Test func aShortListTakesTheSlotsItNeedsNotTheLoadFactor() {
        // Ten elements, exactly promised: one block of about ten slots (the allocator may round
        // up), not 256.
        let ten = RankedSet(sorted: Array(0..<10), blockSize: 256)
        #expect(ten.blockCapacities.count == 1 && ten.blockCapacities[0] < 32, "\(ten.blockCapacities)")
        // A long list's blocks are of the load factor, its last one of what is left.
        let long = RankedSet(sorted: Array(0..<600), blockSize: 256)
        #expect(long.blockCapacities.count == 3 && long.blockCapacities[2] < 128, "\(long.blockCapacities)")
    }

    @Test func bulkLoadRejectsUnsortedInput() async {
        await #expect(processExitsWith: .failure) {
            _ = RankedSet(sorted: [1, 3, 2])
        }
        await #expect(processExitsWith: .failure) {
            _ = RankedSet(sorted: [1, 2, 2, 3])
        }
    }

    @Test func outOfRangeRanksTrap() async {
        await #expect(processExitsWith: .failure) {
            _ = RankedSet(sorted: [1, 2, 3]).element(at: 3)
        }
        await #expect(processExitsWith: .failure) {
            _ = RankedSet(sorted: [1, 2, 3]).elements(from: 4, count: 1)
        }
    }

    // MARK: Windows

    @Test func windowsAcrossBlocks() {
        let reference = Array(0..<1_000)
        let set = RankedSet(sorted: reference, blockSize: 7)
        for start in [0, 1, 6, 7, 8, 13, 14, 500, 990, 999, 1_000] {
            for count in [0, 1, 6, 7, 8, 50, 2_000] {
                #expect(
                    set.elements(from: start, count: count) == Array(reference[start..<min(1_000, start + count)]),
                    "from \(start) count \(count)")
            }
            #expect(Array(set.elements(from: start)) == Array(reference[start...]))
        }
    }

    @Test func lazyElementsAreASnapshot() {
        var set = RankedSet(sorted: 0..<100, blockSize: 4)
        let tail = set.elements(from: 90)
        set.remove(95)
        set.insert(1_000)
        #expect(Array(tail) == Array(90..<100))
        #expect(Array(set.elements(from: 90)) == [90, 91, 92, 93, 94, 96, 97, 98, 99, 1_000])
    }

    @Test func valueSemantics() {
        var a = RankedSet(sorted: 0..<50, blockSize: 4)
        let b = a
        for value in 0..<50 where value % 2 == 0 { a.remove(value) }
        a.insert(100)
        #expect(Array(b) == Array(0..<50))
        #expect(b.invariantViolations() == [])
        #expect(a.invariantViolations() == [])
        #expect(a.count == 26)
    }

    // MARK: ChatOrderKey

    @Test func chatOrderKeysWithEqualDatesOrderBytewise() {
        // Bytewise UTF-8: "Z" (0x5A) < "a" (0x61) < "b" (0x62) < "é" (0xC3 0xA9); "e\u{301}" (0x65…)
        // sorts before "é" precomposed although the two Strings are == (canonically equivalent).
        let ids = ["a", "b", "é", "Z", "e\u{301}", "ab", "", "a\u{0}", "zz", "Ω"]
        let keys = ids.map { ChatOrderKey(lastMessageDate: 1_000, id: $0) }
        var set = RankedSet<ChatOrderKey>(blockSize: 4)
        for key in keys { #expect(set.insert(key) == true) }
        #expect(set.count == ids.count, "NFC and NFD spellings of é are distinct chats")
        let expectedIDs = ["", "Z", "a", "a\u{0}", "ab", "b", "e\u{301}", "zz", "é", "Ω"]
        #expect(Array(set).map { Array($0.id.utf8) } == expectedIDs.map { Array($0.utf8) })
        // Dates descending come first.
        let newer = ChatOrderKey(lastMessageDate: 2_000, id: "zzz")
        let older = ChatOrderKey(lastMessageDate: 500, id: "")
        set.insert(newer)
        set.insert(older)
        #expect(set.element(at: 0) == newer)
        #expect(set.rank(of: older) == set.count - 1)
        // Removing the NFD spelling leaves the NFC one.
        #expect(set.remove(ChatOrderKey(lastMessageDate: 1_000, id: "e\u{301}")) == true)
        #expect(set.contains(ChatOrderKey(lastMessageDate: 1_000, id: "é")))
        #expect(!set.contains(ChatOrderKey(lastMessageDate: 1_000, id: "e\u{301}")))
        #expect(set.invariantViolations() == [])
    }

    @Test func chatOrderKeysRandomizedBumps() {
        // The feed's workload: chats bumped to the top, moved down, created and removed.
        var rng = SeededGenerator(seed: 99)
        let alphabet: [String] = ["a", "b", "é", "Z", "0", "-", "ü", "e\u{301}"]
        func randomID() -> String {
            (0..<Int.random(in: 1...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined()
        }
        var keysByID: [[UInt8]: ChatOrderKey] = [:]
        var reference: [ChatOrderKey] = []
        var set = RankedSet<ChatOrderKey>(blockSize: 8)
        var clock: Int64 = 10_000
        for _ in 0..<4_000 {
            let id = randomID()
            let bytes = Array(id.utf8)
            if let old = keysByID[bytes] {
                #expect(set.remove(old) == referenceRemove(&reference, old))
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    keysByID[bytes] = nil
                    continue
                }
            }
            // Mostly newer (to the top), sometimes an old date (a deleted last message).
            clock += Int64.random(in: 0...2, using: &rng)
            let date = Bool.random(using: &rng) ? clock : Int64.random(in: 9_990...clock, using: &rng)
            let key = ChatOrderKey(lastMessageDate: date, id: id)
            keysByID[bytes] = key
            #expect(set.insert(key) == referenceInsert(&reference, key))
            #expect(set.rank(of: key) == reference.firstIndex { !($0 < key) })
        }
        expectMatches(set, reference)
        #expect(set.count == keysByID.count)
    }
}

/// The number of `Tracked` objects alive.
/// 300 random inserts and removals of values in `values`, each checked against `reference`.
private func mutateRandomly(
    _ set: inout RankedSet<Tracked>, _ reference: inout [Int], values: ClosedRange<Int>, live: LiveCount,
    using rng: inout SeededGenerator, sourceLocation: SourceLocation = #_sourceLocation
) {
    for _ in 0..<300 {
        let value = Int.random(in: values, using: &rng)
        if Bool.random(using: &rng) {
            #expect(set.insert(Tracked(value, live)) == referenceInsert(&reference, value), sourceLocation: sourceLocation)
        } else {
            #expect(set.remove(Tracked(value, live)) == referenceRemove(&reference, value), sourceLocation: sourceLocation)
        }
    }
}

private final class LiveCount {
    var count = 0
}

/// An element that is an object and counts itself alive: a block that copies without retaining or
/// releases twice shows in `LiveCount` (or crashes).
private final class Tracked: Comparable {
    let value: Int
    let live: LiveCount

    init(_ value: Int, _ live: LiveCount) {
        self.value = value
        self.live = live
        live.count += 1
    }

    deinit { live.count -= 1 }

    static func < (lhs: Tracked, rhs: Tracked) -> Bool { lhs.value < rhs.value }
    static func == (lhs: Tracked, rhs: Tracked) -> Bool { lhs.value == rhs.value }
}

/// A sequence whose `underestimatedCount` is `promised`, whatever it holds.
private struct ShortEstimate: Sequence {
    var elements: [Int]
    var promised: Int
    var underestimatedCount: Int { promised }
    func makeIterator() -> IndexingIterator<[Int]> { elements.makeIterator() }
}

/// `RankedSet.SortedBuilder`: elements appended in order make the set `init(movingSorted:)`
/// makes, each held once; an element out of order, one too many or one too few fail it, and
/// every element appended is destroyed once, whichever way it ends.
@Suite struct RankedSetSortedBuilderTests {
    @Test(arguments: [0, 1, 7, 8, 9, 511, 512, 513, 1_024])
    func elementsAppendedInOrderMakeTheSetAMovingLoadMakes(size: Int) {
        for blockSize in [4, 5, 256] {
            let live = LiveCount()
            var rng = SeededGenerator(seed: UInt64(size * 31 + blockSize))
            var reference = Array(0..<size).map { $0 * 3 }
            var builder = RankedSet<Tracked>.SortedBuilder(count: size, blockSize: blockSize)
            for value in reference {
                let appended = builder.append(Tracked(value, live))
                #expect(appended)
            }
            guard var set = builder.finish() else {
                Issue.record("no set for \(size) elements in order")
                return
            }
            #expect(live.count == size)
            #expect(set.invariantViolations() == [])
            #expect(set.map(\.value) == reference)
            #expect(set.blockSizes == RankedSet(sorted: reference, blockSize: blockSize).blockSizes)
            mutateRandomly(&set, &reference, values: -5...(size * 3 + 5), live: live, using: &rng)
            #expect(set.invariantViolations() == [])
            #expect(set.map(\.value) == reference)
            #expect(live.count == reference.count)
            set = RankedSet(blockSize: blockSize)
            #expect(live.count == 0)
        }
    }

    @Test(arguments: [1, 2, 5, 9, 300])
    func anElementOutOfOrderFailsTheBuilderAndLeavesNothingAlive(size: Int) {
        for blockSize in [4, 256] {
            var rng = SeededGenerator(seed: UInt64(size * 7 + blockSize))
            // Each place of the element out of order (equal or less than the one before), and
            // each kind of it.
            for failing in 0..<size {
                let live = LiveCount()
                do {
                    var builder = RankedSet<Tracked>.SortedBuilder(count: size, blockSize: blockSize)
                    for index in 0..<size {
                        let value = index == failing && index > 0
                            ? (Bool.random(using: &rng) ? (index - 1) * 2 : (index - 1) * 2 - 1) : index * 2
                        let appended = builder.append(Tracked(value, live))
                        #expect(appended == (failing == 0 || index < failing))
                    }
                    #expect((builder.finish() == nil) == (failing > 0))
                }
                #expect(live.count == 0, "failing at \(failing) of \(size), blocks of \(blockSize)")
            }
        }
    }

    @Test func tooManyOrTooFewElementsFailTheBuilder() {
        let live = LiveCount()
        do {
            var short = RankedSet<Tracked>.SortedBuilder(count: 3, blockSize: 4)
            let shortAppends = [short.append(Tracked(1, live)), short.append(Tracked(2, live))]
            #expect(shortAppends == [true, true])
            #expect(short.finish() == nil)
            var long = RankedSet<Tracked>.SortedBuilder(count: 2, blockSize: 4)
            let longAppends = [long.append(Tracked(1, live)), long.append(Tracked(2, live)), long.append(Tracked(3, live))]
            #expect(longAppends == [true, true, false])
            #expect(long.finish() == nil)
            var none = RankedSet<Tracked>.SortedBuilder(count: 0)
            #expect(none.finish()?.isEmpty == true)
        }
        #expect(live.count == 0)
    }
}
