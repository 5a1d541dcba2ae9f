import ListDiff
import Testing
import TestSupport

/// The small-edit path (rows trimmed at both ends, a middle aligned by comparing ids) against the
/// slow reference: every result is a valid UIKit batch that keeps the optimal rows in place.
@Suite("Small edits: trimmed ends and aligned middles")
struct ListDiffSmallEditTests {
    private func check(_ old: [TestItem], _ new: [TestItem], _ context: String) throws {
        let result = try ListDiffer.diff(from: old, to: new)
        try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil, "\(context)")
        try #require(
            ReferenceDiff.stayWeight(of: result, old: old, new: new)
                == ReferenceDiff.optimalWeight(old: old, new: new), "\(context)")
    }

    /// Every pair of arrangements of up to 4 ids, between common rows before and after (so that
    /// the ends are trimmed and the middle aligned), with revisions that change on a pattern.
    @Test("every pair of small middles between common ends", arguments: [(0, 3), (2, 0), (1, 2), (4, 4)])
    func middlesBetweenCommonEnds(before: Int, after: Int) throws {
        let arrangements = RandomLists.arrangements(of: [0, 1, 2, 3])
        let head = (100..<(100 + before)).map { TestItem(id: $0) }
        let tail = (200..<(200 + after)).map { TestItem(id: $0) }
        for (oldNumber, oldIDs) in arrangements.enumerated() {
            let old = head + [TestItem](ids: oldIDs) + tail
            for (newNumber, newIDs) in arrangements.enumerated() {
                let middle = newIDs.map { TestItem(id: $0, revision: ($0 + oldNumber + newNumber) % 3 == 0 ? 1 : 0) }
                var new = head + middle + tail
                if !new.isEmpty, (oldNumber + newNumber) % 5 == 0 { new[0].revision += 1 }
                if !new.isEmpty, (oldNumber + newNumber) % 7 == 0 { new[new.count - 1].revision += 1 }
                try check(old, new, "\(old.map(\.id)) → \(new.map(\.id))")
            }
        }
    }

    @Test("one row moved from each position to each other, with and without a change", arguments: [1, 2, 3, 7, 40])
    func bumpAtEachPosition(count: Int) throws {
        let old = [TestItem](ids: Array(0..<count))
        for from in 0..<count {
            for to in 0..<count {
                var new = old
                var row = new.remove(at: from)
                if (from + to) % 2 == 0 { row.revision += 1 }
                new.insert(row, at: to)
                let result = try ListDiffer.diff(from: old, to: new)
                try #require(ReferenceDiff.problem(with: result, old: old, new: new) == nil, "\(from) → \(to)")
                let moves = result.structural?.moves ?? []
                // Any row between the two places could be the one moved; the fewest is one move.
                try #require(moves.count == (from == to ? 0 : 1), "\(from) → \(to): \(moves)")
                try #require(result.updates?.updates.count ?? 0 == ((from + to) % 2 == 0 ? 1 : 0))
                try check(old, new, "\(from) → \(to)")
            }
        }
    }

    @Test("one row inserted or deleted at each position", arguments: [0, 1, 2, 5, 33])
    func insertOrDeleteAtEachPosition(count: Int) throws {
        let old = [TestItem](ids: Array(0..<count))
        for position in 0...count {
            var inserted = old
            inserted.insert(TestItem(id: 1000), at: position)
            let insertion = try ListDiffer.diff(from: old, to: inserted)
            #expect(insertion.structural == Batch(inserts: [IndexedItem(index: position, item: TestItem(id: 1000))]))
            #expect(insertion.updates == nil)
            if position < count {
                var deleted = old
                deleted.remove(at: position)
                let deletion = try ListDiffer.diff(from: old, to: deleted)
                #expect(deletion.structural == Batch(deletes: [position]))
            }
        }
    }

    @Test("identical lists, one list empty, one list a prefix or a suffix of the other")
    func trimmingEdges() throws {
        let rows = [TestItem](ids: Array(0..<10))
        #expect(try ListDiffer.diff(from: rows, to: rows).batches.isEmpty)
        var changed = rows
        changed[0].revision = 1
        changed[9].revision = 1
        #expect(try ListDiffer.diff(from: rows, to: changed)
            == ListDiffResult(structural: nil, updates: Batch(updates: [
                IndexedItem(index: 0, item: changed[0]), IndexedItem(index: 9, item: changed[9]),
            ])))
        #expect(try ListDiffer.diff(from: [], to: rows).structural?.inserts.count == 10)
        #expect(try ListDiffer.diff(from: rows, to: []).structural?.deletes == Array((0..<10).reversed()))
        for cut in 0...10 {
            try check(rows, Array(rows[..<cut]), "prefix \(cut)")
            try check(Array(rows[..<cut]), rows, "grown from prefix \(cut)")
            try check(rows, Array(rows[cut...]), "suffix \(cut)")
            try check(Array(rows[cut...]), rows, "grown from suffix \(cut)")
        }
        for cut in 0..<10 {
            // The last row moved to `cut`, and back.
            let moved = Array(rows[..<cut]) + [rows[9]] + Array(rows[cut..<9])
            try check(moved, rows, "9 moved from \(cut)")
            try check(rows, moved, "9 moved to \(cut)")
        }
    }

    @Test("duplicates are found in trimmed ends and aligned middles", arguments: [
        ([1, 1, 2], [1, 1, 2], ListSide.old),
        ([1, 2, 1], [1, 3, 1], ListSide.old),
        ([5, 1, 2, 3, 1], [5, 1, 2, 3, 1], ListSide.old),
        ([1, 2, 3], [1, 2, 3, 3], ListSide.new),
        ([1, 2, 3], [3, 1, 2, 3], ListSide.new),
        ([1, 2, 3], [1, 2, 9, 9, 3], ListSide.new),
        ([1, 2, 3], [2, 1, 2, 3], ListSide.new),
        ([1, 2, 3, 4, 5], [1, 2, 4, 3, 5, 2], ListSide.new),
    ])
    func duplicatesAroundTheMiddle(old: [Int], new: [Int], side: ListSide) {
        #expect {
            _ = try ListDiffer.diff(from: [TestItem](ids: old), to: [TestItem](ids: new))
        } throws: { error in
            guard case .duplicateID(_, let inList) = error as? ListDiffError else { return false }
            return inList == side
        }
    }

    /// Edits on both sides of the limit where the middle stops being aligned and every id is
    /// matched by hash.
    @Test("edits around the small-edit limit", arguments: [11, 12])
    func editsAroundTheLimit(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<120 {
            let count = Int.random(in: 40...120, using: &generator)
            var old = [TestItem](ids: Array(0..<count))
            var new = old
            var nextID = count
            for _ in 0..<(round % 40) {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where !new.isEmpty:
                    new.remove(at: Int.random(in: 0..<new.count, using: &generator))
                case 1:
                    new.insert(TestItem(id: nextID), at: Int.random(in: 0...new.count, using: &generator))
                    nextID += 1
                default:
                    if !new.isEmpty {
                        let row = new.remove(at: Int.random(in: 0..<new.count, using: &generator))
                        new.insert(row, at: Int.random(in: 0...new.count, using: &generator))
                    }
                }
            }
            if round % 2 == 0 { old.reverse() }
            try check(old, new, "seed \(seed) round \(round)")
        }
    }

    /// A large edit (100 rows reversed) matches the new rows in order, comparing a row that follows
    /// a match with the old row after it before hashing it: duplicates are found either way.
    @Test("duplicates in a large edit", arguments: [
        ([], [2], ListSide.new),  // a matched row again, right after the old row before it
        ([4], [], ListSide.new),  // a matched row again, hashed
        ([], [1000, 1000], ListSide.new),  // an inserted id twice
        ([1000], [1000], ListSide.new),  // an inserted id twice, apart
        ([], [0], ListSide.new),  // the row that stays as the common first row, again
    ])
    func duplicatesInALargeEdit(front: [Int], back: [Int], side: ListSide) {
        let old = [TestItem](ids: Array(0..<100))
        let new = [TestItem](ids: [0] + front + Array((1..<100).reversed()) + back)
        #expect {
            _ = try ListDiffer.diff(from: old, to: new)
        } throws: { error in
            guard case .duplicateID(_, let inList) = error as? ListDiffError else { return false }
            return inList == side
        }
        #expect {
            _ = try ListDiffer.diff(from: old + [TestItem(id: 7)], to: [TestItem](ids: Array((0..<100).reversed())))
        } throws: { error in
            guard case .duplicateID("7", .old) = error as? ListDiffError else { return false }
            return true
        }
    }

    /// The same pairs as the exhaustive suite with 40 unrelated rows deleted and inserted around
    /// them, so that the middle is too different to align and every id is matched by hash.
    @Test("every pair of small lists inside a large edit")
    func smallListsInsideALargeEdit() throws {
        let arrangements = RandomLists.arrangements(of: [0, 1, 2, 3, 4])
        let gone = (1000..<1020).map { TestItem(id: $0) }
        let added = (2000..<2020).map { TestItem(id: $0) }
        for (oldNumber, oldIDs) in arrangements.enumerated() where oldNumber % 3 == 0 {
            let old = gone + [TestItem](ids: oldIDs)
            for (newNumber, newIDs) in arrangements.enumerated() {
                let middle = newIDs.map { TestItem(id: $0, revision: ($0 + oldNumber + newNumber) % 3 == 0 ? 1 : 0) }
                try check(old, middle + added, "\(oldIDs) → \(newIDs)")
            }
        }
    }
}

@Suite("Choosing among runs")
struct FewestMovesRunTests {
    /// The weight of a choice: rows that stay, then those of them that did not go up.
    private func weight(_ stays: [Bool], _ ranks: [Int]) -> ReferenceDiff.Weight {
        var weight = ReferenceDiff.Weight(notUp: 0, up: 0)
        for k in ranks.indices where stays[k] {
            if ranks[k] < k { weight.up += 1 } else { weight.notUp += 1 }
        }
        return weight
    }

    private func optimal(_ ranks: [Int]) -> ReferenceDiff.Weight? {
        let old = [TestItem](ids: Array(ranks.indices))
        var new = old
        for k in ranks.indices { new[ranks[k]] = old[k] }
        return ReferenceDiff.optimalWeight(old: old, new: new)
    }

    private func check(_ ranks: [Int]) throws {
        let stays = FewestMoves.select(newRanks: ranks)
        let kept = ranks.indices.filter { stays[$0] }
        try #require(zip(kept, kept.dropFirst()).allSatisfy { ranks[$0] < ranks[$1] }, "\(ranks)")
        try #require(weight(stays, ranks) == optimal(ranks), "\(ranks)")
    }

    @Test("every permutation of up to 7 ranks")
    func everyPermutation() throws {
        for size in 0...7 {
            for ranks in RandomLists.arrangements(of: Array(0..<size)) where ranks.count == size {
                try check(ranks)
            }
        }
    }

    /// Blocks of consecutive ranks moved as a whole (runs that stay together), and single ranks.
    @Test("blocks moved around", arguments: [41, 42])
    func blocksMoved(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<300 {
            let count = Int.random(in: 0...60, using: &generator)
            var ranks = Array(0..<count)
            for _ in 0..<Int.random(in: 0...5, using: &generator) where count > 1 {
                let start = Int.random(in: 0..<count, using: &generator)
                let length = Int.random(in: 1...Swift.min(8, count - start), using: &generator)
                let block = Array(ranks[start..<(start + length)])
                ranks.removeSubrange(start..<(start + length))
                ranks.insert(contentsOf: block, at: Int.random(in: 0...ranks.count, using: &generator))
            }
            try check(ranks)
        }
    }
}
