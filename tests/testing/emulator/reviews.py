"""Pull request reviews and review comments (a mixin of `GitHubEmulator`): routes, seeding, and
the `pull_request_review` webhook payload.

Where a comment may sit is computed from the real diff of the pull request in the bare repository
(`pulldiff`). A review whose comment lies outside that diff is refused whole with GitHub's 422,
whose `errors` are one sentence joining the problems (as GitHub's Rails validations print them:
"a and b", "a, b, and c"). A reply joins the thread of the comment it answers: GitHub documents
that replies to replies are not supported ("This must be the ID of a top-level review comment"),
and the emulator threads such a reply under the thread's first comment (`in_reply_to_id` is
always a thread's first comment), so a client cannot tell the two apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tests.testing.emulator.pulldiff import FileDiff, pull_diff, pull_files
from tests.testing.emulator.routes import ApiError, Result, route
from tests.testing.emulator.shapes import example, node_id, now
from tests.testing.emulator.state import Pull, Repo, Review, ReviewComment

if TYPE_CHECKING:
    from tests.testing.emulator.core import GitHubEmulator

_DOCS_CREATE = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
_DOCS_REVIEW = "https://docs.github.com/rest/pulls/reviews#get-a-review-for-a-pull-request"
_DOCS_REPLY = "https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment"
_STATES = {"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}
_THREAD = "Pull request review thread"


def _sentence(parts: list[str]) -> str:
    if len(parts) <= 2:
        return " and ".join(parts)
    return ", ".join(parts[:-1]) + ", and " + parts[-1]


class ReviewRoutes:
    # ---- seeding ---------------------------------------------------------------------------------
    def add_review(
        self: GitHubEmulator,
        repo: str,
        number: int,
        user: str,
        state: str = "CHANGES_REQUESTED",
        body: str = "",
        comments: list[dict[str, Any]] | None = None,
        *,
        commit_id: str | None = None,
    ) -> Review:
        """A submitted review of PR #number by `user` (state CHANGES_REQUESTED, COMMENTED or
        APPROVED) with one thread per comment dict (`path, line, body`, optional `side`,
        `start_line`, `start_side`, and `replies`: [(user, body), …]). Lines must be in the diff."""
        if state not in ("CHANGES_REQUESTED", "COMMENTED", "APPROVED"):
            raise ValueError(f"state {state!r}: CHANGES_REQUESTED, COMMENTED or APPROVED")
        r = self.repos[repo]
        pull = self._pull(r, number)
        if user not in self.users:
            self.add_user(user)
        sha = commit_id or pull.head_sha
        drafts = [{k: v for k, v in c.items() if k != "replies"} for c in comments or []]
        try:
            placed = self._place(r, pull, sha, drafts)
        except ApiError as exc:
            raise ValueError(f"a comment is outside the diff of #{number}: {exc.body['errors']}") from None
        review = self._new_review(pull, user, state, body, sha)
        for given, (draft, hunk) in zip(comments or [], placed, strict=True):
            first = self._new_review_comment(pull, review.id, user, draft, sha, hunk)
            for reply_user, reply_body in given.get("replies", []):
                if reply_user not in self.users:
                    self.add_user(reply_user)
                self._reply(pull, first, reply_user, reply_body)
        return review

    def review_comments_of(self: GitHubEmulator, repo: str, number: int) -> list[ReviewComment]:
        """Every review comment of PR #number, oldest first."""
        return list(self.repos[repo].pulls[number].review_comments)

    def reviews_of(self: GitHubEmulator, repo: str, number: int) -> list[Review]:
        return list(self.repos[repo].pulls[number].reviews)

    def pull_request_review_event(
        self: GitHubEmulator, repo: str, number: int, review_id: int, action: str = "submitted"
    ) -> dict[str, Any]:
        """The `pull_request_review` webhook payload (shaped as octokit's example): `review.state`
        lower-case (`changes_requested`), `pull_request` without the fields only the REST API has."""
        r = self.repos[repo]
        pull = self._pull(r, number)
        review = self._review(pull, str(review_id))
        hook_review = self._review_json(r, pull, review)
        hook_review["state"] = review.state.lower()
        hook_review["body"] = review.body or None
        hook_pull = self._pull_json(r, pull)
        for key in (
            "merged",
            "mergeable",
            "rebaseable",
            "mergeable_state",
            "merged_by",
            "comments",
            "review_comments",
            "maintainer_can_modify",
            "commits",
            "additions",
            "deletions",
            "changed_files",
        ):
            hook_pull.pop(key, None)
        return {
            "action": action,
            "review": hook_review,
            "pull_request": hook_pull,
            "repository": self._repo_json(r),
            "sender": self._user_json(review.user),
        }

    # ---- routes ----------------------------------------------------------------------------------
    @route("GET", r"/pulls/(?P<number>\d+)/reviews")
    def list_reviews(self: GitHubEmulator, r: Repo, number: str, query: dict[str, str], **_: Any) -> Result:
        pull = self._pull(r, number)
        items = [self._review_json(r, pull, x) for x in pull.reviews]
        chunk, links = self._paginate(items, query, f"/repos/{r.full_name}/pulls/{number}/reviews")
        return 200, chunk, links

    @route("GET", r"/pulls/(?P<number>\d+)/reviews/(?P<review_id>\d+)")
    def get_review(self: GitHubEmulator, r: Repo, number: str, review_id: str, **_: Any) -> Result:
        pull = self._pull(r, number)
        return 200, self._review_json(r, pull, self._review(pull, review_id)), []

    @route("GET", r"/pulls/(?P<number>\d+)/reviews/(?P<review_id>\d+)/comments")
    def list_review_comments_of_review(
        self: GitHubEmulator, r: Repo, number: str, review_id: str, query: dict[str, str], **_: Any
    ) -> Result:
        pull = self._pull(r, number)
        review = self._review(pull, review_id)
        items = [
            self._review_comment_json(r, pull, c) for c in pull.review_comments if c.review_id == review.id
        ]
        path = f"/repos/{r.full_name}/pulls/{number}/reviews/{review_id}/comments"
        chunk, links = self._paginate(items, query, path)
        return 200, chunk, links

    @route("GET", r"/pulls/(?P<number>\d+)/comments")
    def list_review_comments(
        self: GitHubEmulator, r: Repo, number: str, query: dict[str, str], **_: Any
    ) -> Result:
        pull = self._pull(r, number)
        comments = list(pull.review_comments)  # sort=created, direction=asc (GitHub's default)
        if query.get("direction") == "desc":
            comments.reverse()
        items = [self._review_comment_json(r, pull, c) for c in comments]
        chunk, links = self._paginate(items, query, f"/repos/{r.full_name}/pulls/{number}/comments")
        return 200, chunk, links

    @route("GET", r"/pulls/(?P<number>\d+)/files")
    def list_pull_files(
        self: GitHubEmulator, r: Repo, number: str, query: dict[str, str], **_: Any
    ) -> Result:
        """The files the pull request changes (`diff-entry`s, at most 3000 as GitHub says)."""
        pull = self._pull(r, number)
        base_sha = r.bare.ref(f"refs/heads/{pull.base_ref}") or ""
        api, web = self._repo_api(r), self._repo_web(r)
        items: list[dict[str, Any]] = []
        for f in pull_files(r.path, base_sha, pull.head_sha)[:3000]:
            side = pull.head_sha if f.status != "removed" else base_sha
            quoted = quote(f.filename)
            entry: dict[str, Any] = {
                "sha": r.bare.blob_sha(side, f.filename),
                "filename": f.filename,
                "status": f.status,
                "additions": f.additions,
                "deletions": f.deletions,
                "changes": f.additions + f.deletions,
                "blob_url": f"{web}/blob/{side}/{quoted}",
                "raw_url": f"{web}/raw/{side}/{quoted}",
                "contents_url": f"{api}/contents/{quoted}?ref={side}",
            }
            if f.patch is not None:
                entry["patch"] = f.patch
            if f.previous_filename is not None:
                entry["previous_filename"] = f.previous_filename
            items.append(entry)
        chunk, links = self._paginate(items, query, f"/repos/{r.full_name}/pulls/{number}/files")
        return 200, chunk, links

    @route("POST", r"/pulls/(?P<number>\d+)/comments/(?P<comment_id>\d+)/replies")
    def reply_to_review_comment(
        self: GitHubEmulator, r: Repo, number: str, comment_id: str, body: Any, login: str, **_: Any
    ) -> Result:
        pull = self._pull(r, number)
        target = next((c for c in pull.review_comments if c.id == int(comment_id)), None)
        if target is None:  # also a comment of another pull request
            raise ApiError(404, "Not Found", _DOCS_REPLY)
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise ApiError(422, "Unprocessable Entity", _DOCS_REPLY, errors=["Body can't be blank"])
        reply = self._reply(pull, target, login, text)
        out = self._review_comment_json(r, pull, reply)
        return 201, out, [("Location", out["url"])]

    @route("POST", r"/pulls/(?P<number>\d+)/reviews")
    def create_review(self: GitHubEmulator, r: Repo, number: str, body: Any, login: str, **_: Any) -> Result:
        pull = self._pull(r, number)
        body = body or {}
        event = body.get("event")
        if event in ("APPROVE", "REQUEST_CHANGES") and login == pull.user:
            verb = "approve" if event == "APPROVE" else "request changes on"
            raise ApiError(
                422, "Unprocessable Entity", _DOCS_CREATE, errors=[f"Can not {verb} your own pull request"]
            )
        sha = str(body.get("commit_id") or pull.head_sha)
        placed = self._place(r, pull, sha, list(body.get("comments") or []))
        state = _STATES.get(str(event), "PENDING")
        review = self._new_review(pull, login, state, str(body.get("body") or ""), sha)
        for draft, hunk in placed:
            self._new_review_comment(pull, review.id, login, draft, sha, hunk)
        return 200, self._review_json(r, pull, review), []

    # ---- placing comments in the diff --------------------------------------------------------------
    def _place(
        self: GitHubEmulator, r: Repo, pull: Pull, sha: str, drafts: list[dict[str, Any]]
    ) -> list[tuple[dict[str, Any], tuple[str, int]]]:
        """Each draft with its `diff_hunk`, or the 422 GitHub answers when any is outside the diff."""
        base_sha = r.bare.ref(f"refs/heads/{pull.base_ref}") or ""
        files: dict[str, FileDiff] = pull_diff(r.path, base_sha, sha) if drafts else {}
        problems: list[str] = []
        placed = []
        for draft in drafts:
            found = self._problems(files, draft)
            problems += [p for p in found[0] if p not in problems]
            placed.append((draft, found[1]))
        if problems:
            raise ApiError(422, "Unprocessable Entity", _DOCS_CREATE, errors=[_sentence(problems)])
        return placed

    @staticmethod
    def _problems(files: dict[str, FileDiff], draft: dict[str, Any]) -> tuple[list[str], tuple[str, int]]:
        diff = files.get(str(draft.get("path") or ""))
        if diff is None:
            return [f"{_THREAD} path is invalid", f"{_THREAD} diff hunk can't be blank"], ("", 0)
        side = str(draft.get("side") or "RIGHT")
        line = draft.get("line")
        hunk = diff.hunk_at(side, line) if isinstance(line, int) else None
        start = draft.get("start_line")
        if hunk is None:
            problems = [f"{_THREAD} line must be part of the diff"]
            if isinstance(start, int):
                problems.append(f"{_THREAD} start line must be part of the same hunk as the line.")
            return [*problems, f"{_THREAD} diff hunk can't be blank"], ("", 0)
        if isinstance(start, int):
            start_side = str(draft.get("start_side") or side)
            if start_side == side and start >= line:
                return [f"{_THREAD} start line must precede the end line."], ("", 0)
            if diff.hunk_at(start_side, start) is not hunk:
                return [f"{_THREAD} start line must be part of the same hunk as the line."], ("", 0)
        assert isinstance(line, int)
        return [], (hunk.excerpt(side, line), diff.position(hunk, side, line))

    # ---- state -------------------------------------------------------------------------------------
    def _review(self: GitHubEmulator, pull: Pull, review_id: str) -> Review:
        review = next((x for x in pull.reviews if x.id == int(review_id)), None)
        if review is None:
            raise ApiError(404, "Not Found", _DOCS_REVIEW)
        return review

    def _new_review(self: GitHubEmulator, pull: Pull, user: str, state: str, body: str, sha: str) -> Review:
        review = Review(self.new_id(), user, state, body, sha, None if state == "PENDING" else now())
        pull.reviews.append(review)
        return review

    def _new_review_comment(
        self: GitHubEmulator,
        pull: Pull,
        review_id: int,
        user: str,
        draft: dict[str, Any],
        sha: str,
        where: tuple[str, int],
    ) -> ReviewComment:
        side = str(draft.get("side") or "RIGHT")
        start = draft.get("start_line")
        comment = ReviewComment(
            self.new_id(),
            review_id,
            user,
            str(draft.get("body") or ""),
            str(draft["path"]),
            int(draft["line"]),
            side,
            int(start) if isinstance(start, int) else None,
            str(draft.get("start_side") or side) if isinstance(start, int) else None,
            sha,
            *where,
            created_at=now(),
        )
        pull.review_comments.append(comment)
        return comment

    def _reply(
        self: GitHubEmulator, pull: Pull, target: ReviewComment, user: str, body: str
    ) -> ReviewComment:
        """A reply is a comment of a new COMMENTED review, in the thread of `target`."""
        first = target.in_reply_to_id or target.id
        root = next(c for c in pull.review_comments if c.id == first)
        review = self._new_review(pull, user, "COMMENTED", "", root.commit_id)
        reply = ReviewComment(
            self.new_id(),
            review.id,
            user,
            body,
            root.path,
            root.line,
            root.side,
            root.start_line,
            root.start_side,
            root.commit_id,
            root.diff_hunk,
            root.position,
            in_reply_to_id=root.id,
            created_at=now(),
        )
        pull.review_comments.append(reply)
        return reply

    # ---- shapes -------------------------------------------------------------------------------------
    def _review_json(self: GitHubEmulator, r: Repo, pull: Pull, review: Review) -> dict[str, Any]:
        api, web = self._repo_api(r), self._repo_web(r)
        html = f"{web}/pull/{pull.number}#pullrequestreview-{review.id}"
        out = self.shapes.rewrite(example("pull-request-review"))
        out.update(
            id=review.id,
            node_id=node_id("PRR", review.id),
            user=self._user_json(review.user),
            body=review.body,
            state=review.state,
            html_url=html,
            pull_request_url=f"{api}/pulls/{pull.number}",
            _links={"html": {"href": html}, "pull_request": {"href": f"{api}/pulls/{pull.number}"}},
            commit_id=review.commit_id,
            author_association=self._association(r, review.user),
        )
        if review.submitted_at is None:
            out.pop("submitted_at", None)
        else:
            out["submitted_at"] = review.submitted_at
        return out  # type: ignore[no-any-return]

    def _review_comment_json(
        self: GitHubEmulator, r: Repo, pull: Pull, comment: ReviewComment
    ) -> dict[str, Any]:
        api, web = self._repo_api(r), self._repo_web(r)
        url = f"{api}/pulls/comments/{comment.id}"
        html = f"{web}/pull/{pull.number}#discussion_r{comment.id}"
        pull_url = f"{api}/pulls/{pull.number}"
        out = self.shapes.rewrite(example("pull-request-review-comment"))
        out.update(
            url=url,
            pull_request_review_id=comment.review_id,
            id=comment.id,
            node_id=node_id("PRRC", comment.id),
            diff_hunk=comment.diff_hunk,
            path=comment.path,
            position=comment.position,  # "closing down; use `line` instead", still sent
            original_position=comment.position,
            commit_id=comment.commit_id,
            original_commit_id=comment.commit_id,
            user=self._user_json(comment.user),
            body=comment.body,
            created_at=comment.created_at,
            updated_at=comment.created_at,
            html_url=html,
            pull_request_url=pull_url,
            author_association=self._association(r, comment.user),
            _links={"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull_url}},
            start_line=comment.start_line,
            original_start_line=comment.start_line,
            start_side=comment.start_side,
            line=comment.line,
            original_line=comment.line,
            side=comment.side,
            subject_type="line",
        )
        out.pop("reactions", None)
        out.pop("in_reply_to_id", None)
        if comment.in_reply_to_id is not None:
            out["in_reply_to_id"] = comment.in_reply_to_id
        return out  # type: ignore[no-any-return]

    def _association(self: GitHubEmulator, r: Repo, login: str) -> str:
        if login == r.full_name.split("/")[0]:
            return "OWNER"
        if self.permission_of(r, login) in ("admin", "maintain", "write"):
            return "COLLABORATOR"
        return "NONE"
