"""The episodes page of a report's error analysis: every episode in one sortable, filterable
list, each linking to its conversation, and a search across the transcripts.

The search answers what :func:`accordkit.find` answers (text in a message or in its tool
calls' arguments, the tool called, the message's role, an action-diff status), inside the
static page and offline. The page's policy allows no inline script but the page's own
(named by its sha256) and no request at all, so the transcripts' text travels in the page
as a JSON data block (``<script type="application/json">``, which a browser never runs) that
the page's one script (:data:`EPISODES_SCRIPT`) reads: a data file beside the page would
need ``fetch``, which a browser refuses for a page opened from disk.

:func:`episode_table` and :func:`search_index` are pure (frames and records in, a frame and
plain lists out); :func:`episodes_page` turns them into the page's body. Every value from
the data is escaped in the HTML, and the JSON block cannot end its element (``<`` is
written ``\\u003c``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from .pages import own_script

__all__ = ["episode_table", "search_index", "episodes_page", "EPISODES_SCRIPT",
           "EPISODE_COLUMNS", "MAX_SEARCH_CHARS", "json_block"]

#: Columns of :func:`episode_table`, in page order.
EPISODE_COLUMNS = ["episode_id", "configuration", "domain", "task", "trial", "reward",
                   "outcome", "first_divergence", "divergence_turn", "review_errors"]

#: Characters of one message the page's search reads (a tool result can be long; the
#: conversation page shows it whole). The page says so.
MAX_SEARCH_CHARS = 4_000


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def episode_table(episodes: pd.DataFrame, *, actions: pd.DataFrame | None = None,
                  reviews: Any = None) -> pd.DataFrame:
    """One row per episode: what the episodes page lists.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores (``episode_id``, the configuration columns, ``scenario_id``,
        ``rollout``, ``reward``, ``success``...).
    actions : pandas.DataFrame, optional
        The action diff (its ``first_divergence_turn`` and ``divergence_reason``).
    reviews : ReviewTables, optional
        Stored or judged reviews: the number of errors found, ``"not reviewed"`` where no
        review covers the episode (never a 0 it does not hold).

    Returns
    -------
    pandas.DataFrame
        :data:`EPISODE_COLUMNS`, in the episodes' order. ``outcome`` is ``pass`` or
        ``fail`` (the episode's ``success``), ``–`` when it is not scored; ``trial`` is the
        stored rollout, else the episode's place among its configuration's episodes of
        the task (1, 2, ...).

    Examples
    --------
    >>> import pandas as pd
    >>> eps = pd.DataFrame({"episode_id": ["a", "b"], "agent_model": ["m", "m"],
    ...                     "scenario_id": ["t1", "t1"], "reward": [1.0, 0.0],
    ...                     "success": [True, False]})
    >>> diff = pd.DataFrame({"episode_id": ["b"], "first_divergence_turn": [3],
    ...                      "divergence_reason": ["missing"]})
    >>> episode_table(eps, actions=diff)[["trial", "outcome", "first_divergence"]].values.tolist()
    [[1, 'pass', ''], [2, 'fail', 'missing']]
    """
    from ..metrics.reviews import review_status
    from ..tables.tau2 import with_configuration

    frame = with_configuration(episodes.drop_duplicates("episode_id").reset_index(drop=True))
    ids = frame["episode_id"].astype(str)
    out = pd.DataFrame({"episode_id": ids, "configuration": frame["configuration"]})
    out["domain"] = frame["domain"].astype(object).where(frame["domain"].notna(), "") \
        if "domain" in frame else ""
    task = frame["scenario_id"] if "scenario_id" in frame else pd.Series("", index=frame.index)
    out["task"] = task.astype(object).where(task.notna(), "").astype(str)
    if "rollout" in frame and frame["rollout"].notna().all():
        out["trial"] = pd.array(frame["rollout"], dtype="Int64")
    else:
        out["trial"] = pd.array(out.groupby(["configuration", "task"]).cumcount() + 1,
                                dtype="Int64")
    out["reward"] = pd.to_numeric(frame["reward"], errors="coerce") if "reward" in frame \
        else float("nan")
    success = frame["success"] if "success" in frame else pd.Series(None, index=frame.index)
    out["outcome"] = ["–" if _missing(s) else ("pass" if bool(s) else "fail")
                      for s in success]
    reason = pd.Series("", index=ids.values, dtype=object)
    turn = pd.Series(pd.NA, index=ids.values, dtype="Int64")
    if actions is not None and len(actions):
        first = actions.drop_duplicates("episode_id").set_index(
            actions.drop_duplicates("episode_id")["episode_id"].astype(str))
        known = first.reindex(ids.values)
        reason = known["divergence_reason"].astype(object).where(
            known["divergence_reason"].notna(), "")
        turn = pd.array(known["first_divergence_turn"].where(
            known["divergence_reason"].notna()), dtype="Int64")
    out["first_divergence"] = list(reason)
    out["divergence_turn"] = pd.array(turn, dtype="Int64")
    out["review_errors"] = review_status(reviews, ids.tolist()).tolist()
    return out[EPISODE_COLUMNS]


def search_index(records: Iterable[Mapping[str, Any]], *,
                 max_chars: int = MAX_SEARCH_CHARS) -> dict[str, list[list[Any]]]:
    """What the page's search reads of each episode: ``[turn_idx, role, text, tools]`` per
    message, where ``text`` is the message's content and its calls' arguments (as
    :func:`accordkit.find` searches them), cut at ``max_chars``, and ``tools`` the names
    of the tools the message calls.

    Examples
    --------
    >>> search_index([{"episode_id": "e", "messages": [
    ...     {"role": "assistant", "content": "", "turn_idx": 2, "tool_calls": [
    ...         {"name": "book", "arguments_json": '{"id": 7}'}]}]}])
    {'e': [[2, 'assistant', '{"id": 7}', ['book']]]}
    """
    out: dict[str, list[list[Any]]] = {}
    for episode in records:
        rows = []
        for msg in episode.get("messages") or ():
            calls = msg.get("tool_calls") or ()
            text = " ".join([str(msg.get("content") or ""),
                             *(str(c.get("arguments_json") or "") for c in calls)]).strip()
            turn = msg.get("turn_idx")
            rows.append([None if _missing(turn) else int(turn), str(msg.get("role") or "?"),
                         text[:max_chars], [str(c.get("name")) for c in calls]])
        out[str(episode["episode_id"])] = rows
    return out


def _statuses(actions: pd.DataFrame | None) -> dict[str, list[list[Any]]]:
    """Per episode, its action-diff rows as ``[status, tool, turn_idx]``."""
    if actions is None or not len(actions):
        return {}
    out: dict[str, list[list[Any]]] = {}
    for eid, status, name, turn in zip(actions["episode_id"].astype(str), actions["status"],
                                       actions["name"], actions["turn_idx"], strict=True):
        out.setdefault(eid, []).append([str(status), str(name),
                                        None if _missing(turn) else int(turn)])
    return out


def json_block(element_id: str, data: Any) -> str:
    """``data`` as a JSON data block a page's script reads (never run by the browser; no
    ``<`` inside, so nothing in the data can close the element).

    Examples
    --------
    >>> json_block("d", {"x": "</script><b>"})
    '<script type="application/json" id="d">{"x": "\\\\u003c/script>\\\\u003cb>"}</script>'
    """
    text = json.dumps(data, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace(
        "\u2029", "\\u2029")
    return f'<script type="application/json" id="{html.escape(element_id)}">{text}</script>'


def _cell(value: Any, digits: int = 3) -> str:
    if _missing(value):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


#: Roles and statuses the search offers.
_ROLES = ("user", "assistant", "tool", "system")
_STATUSES = ("matched", "wrong_arguments", "missing", "extra")


def episodes_page(table: pd.DataFrame, hrefs: Mapping[str, str],
                  index: Mapping[str, Sequence[Sequence[Any]]],
                  actions: pd.DataFrame | None = None) -> str:
    """The body of the episodes page: the search and filter controls, the list
    (:func:`episode_table`, each id linking to ``hrefs[episode_id]``), the JSON block the
    script reads and the script itself (:data:`EPISODES_SCRIPT`).

    Rows stay in the HTML, so a reader without scripts sees every episode and its link.
    """
    esc = html.escape
    configs = sorted(set(table["configuration"]))
    options = "".join(f'<option value="{esc(c)}">{esc(c)}</option>' for c in configs)
    heads = ["episode", "configuration", "domain", "task", "trial", "reward", "outcome",
             "first divergence", "turn", "review errors"]
    rows = []
    for i, row in enumerate(table.itertuples(index=False)):
        eid = str(row.episode_id)
        link = esc(eid)
        if eid in hrefs:
            link = f'<a href="{esc(hrefs[eid])}">{link}</a>'
        outcome = esc(row.outcome)
        rows.append(
            f'<tr data-i="{i}"><td class="ak-id">{link}</td><td>{esc(row.configuration)}</td>'
            f"<td>{esc(str(row.domain))}</td><td>{esc(row.task)}</td><td>{_cell(row.trial)}</td>"
            f"<td>{_cell(row.reward)}</td><td class=\"ak-{outcome}\">{outcome}</td>"
            f"<td>{esc(row.first_divergence)}</td><td>{_cell(row.divergence_turn)}</td>"
            f"<td>{esc(str(row.review_errors))}</td></tr>")
    statuses = _statuses(actions)
    ids = table["episode_id"].astype(str).tolist()
    data = {"messages": [index.get(e, []) for e in ids],
            "statuses": [statuses.get(e, []) for e in ids],
            "searchable": [e in index for e in ids]}
    role_opts = "".join(f'<option value="{r}">{r}</option>' for r in _ROLES)
    status_opts = "".join(f'<option value="{s}">{s.replace("_", " ")}</option>'
                          for s in _STATUSES)
    controls = (
        '<form class="ak-controls" id="ak-controls" role="search">'
        '<fieldset><legend>List</legend>'
        '<label>filter <input id="ak-filter" type="search" placeholder="any column"></label> '
        f'<label>configuration <select id="ak-conf"><option value="">all</option>{options}'
        "</select></label> "
        '<label>outcome <select id="ak-outcome"><option value="">all</option>'
        '<option value="pass">pass</option><option value="fail">fail</option></select></label>'
        "</fieldset>"
        "<fieldset><legend>Search the transcripts</legend>"
        '<label>text <input id="ak-text" type="search" placeholder="words in a message or '
        'its calls"></label> '
        f'<label>role <select id="ak-role"><option value="">any</option>{role_opts}</select>'
        "</label> "
        '<label>tool <input id="ak-tool" type="search" placeholder="exact tool name"></label> '
        f'<label>action diff <select id="ak-status"><option value="">any</option>{status_opts}'
        "</select></label>"
        '<button type="reset" id="ak-clear">clear</button>'
        "</fieldset></form>"
        '<p class="ak-muted" id="ak-count" aria-live="polite">'
        f"{len(table)} episodes.</p>"
        '<div id="ak-hits" class="ak-hits"></div>')
    note = (f'<p class="ak-muted">The search reads the first {MAX_SEARCH_CHARS:,} characters '
            "of each message and its calls' arguments, case-insensitive, as "
            "<code>ak.find(ds, text=..., tool=..., role=..., status=...)</code> does in Python; "
            "a hit links to its turn. Click a column's header to sort.</p>")
    table_html = ('<div class="ak-list"><table id="ak-episodes" class="ak-sort"><thead><tr>'
                  + "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead><tbody>"
                  + "".join(rows) + "</tbody></table></div>")
    return (note + controls + table_html + json_block("ak-episodes-data", data)
            + f"<script>{EPISODES_SCRIPT}</script>")


#: The episodes page's script: sorting, filtering, the transcript search and its hits,
#: with the state kept in the address's fragment (so that the browser's back button, and
#: the conversation page's "back" link, return to the same list). It reads the page's
#: JSON block, builds every element it adds with ``textContent`` (no HTML from data) and
#: requests nothing.
EPISODES_SCRIPT = own_script("""
(function(){
var t0=performance.now();
var data=JSON.parse(document.getElementById('ak-episodes-data').textContent);
var table=document.getElementById('ak-episodes'), body=table.tBodies[0];
var rows=Array.prototype.slice.call(body.rows);
var texts=rows.map(function(r){return r.textContent.toLowerCase();});
var low=data.messages.map(function(ms){return ms.map(function(m){return String(m[2]).toLowerCase();});});
var $=function(id){return document.getElementById(id);};
var f={filter:$('ak-filter'),conf:$('ak-conf'),outcome:$('ak-outcome'),text:$('ak-text'),
  role:$('ak-role'),tool:$('ak-tool'),status:$('ak-status')};
var count=$('ak-count'), hitsBox=$('ak-hits'), heads=table.tHead.rows[0].cells;
var sortCol=-1, sortAsc=true, MAXHITS=200;
function num(t){var m=/^\\s*(-?[0-9][0-9,]*\\.?[0-9]*)\\s*$/.exec(t);
  return m?parseFloat(m[1].replace(/,/g,'')):NaN;}
function href(i){var a=rows[i].querySelector('a'); return a?a.getAttribute('href'):null;}
function snippet(text,q){if(!q){return text.slice(0,140);}
  var k=text.toLowerCase().indexOf(q); if(k<0){return text.slice(0,140);}
  var a=Math.max(0,k-60); return (a?'\\u2026':'')+text.slice(a,k+q.length+80)+
  (k+q.length+80<text.length?'\\u2026':'');}
function search(){
  var q=f.text.value.trim().toLowerCase(), role=f.role.value, tool=f.tool.value.trim(),
      status=f.status.value, on=!!(q||role||tool||status), hits=[], matched={};
  if(!on){return null;}
  data.messages.forEach(function(ms,i){
    var st=data.statuses[i];
    if(status){var ok=st.some(function(s){return s[0]===status&&(!tool||s[1]===tool);});
      if(!ok){return;}
      if(!q&&!role){st.forEach(function(s){if(s[0]===status&&(!tool||s[1]===tool)){
        matched[i]=true; hits.push([i,s[2],'',s[1],s[0].replace('_',' ')]);}}); return;}}
    ms.forEach(function(m,j){
      if(role&&m[1]!==role){return;}
      if(tool&&m[3].indexOf(tool)<0){return;}
      if(q&&low[i][j].indexOf(q)<0){return;}
      matched[i]=true; hits.push([i,m[0],m[1],m[3].join(', '),snippet(m[2],q)]);
    });
  });
  return {hits:hits,matched:matched};
}
function state(){var s=[];Object.keys(f).forEach(function(k){if(f[k].value){
  s.push(k+'='+encodeURIComponent(f[k].value));}});
  if(sortCol>=0){s.push('sort='+sortCol+(sortAsc?'a':'d'));} return s.join('&');}
function draw(){
  var t=performance.now(), q=f.filter.value.trim().toLowerCase(), conf=f.conf.value,
      outcome=f.outcome.value, found=search(), shown=0;
  rows.forEach(function(r,i){
    var ok=(!q||texts[i].indexOf(q)>=0)&&(!conf||r.cells[1].textContent===conf)&&
      (!outcome||r.cells[6].textContent===outcome)&&(!found||found.matched[i]);
    r.hidden=!ok; if(ok){shown+=1;}
  });
  while(hitsBox.firstChild){hitsBox.removeChild(hitsBox.firstChild);}
  var words=shown+' of '+rows.length+' episodes shown';
  if(found){
    var listed=found.hits.filter(function(h){return !rows[h[0]].hidden;});
    words+='; '+listed.length+' matching message'+(listed.length===1?'':'s')+
      (listed.length>MAXHITS?' (the first '+MAXHITS+' listed)':'');
    var ol=document.createElement('ol'); ol.className='ak-hitlist';
    listed.slice(0,MAXHITS).forEach(function(h){
      var li=document.createElement('li'), a=document.createElement('a'), target=href(h[0]);
      a.textContent=rows[h[0]].cells[0].textContent+(h[1]===null?'':' \\u00b7 turn '+h[1]);
      if(target){a.setAttribute('href',target+(h[1]===null?'':'#turn-'+h[1]));}
      li.appendChild(a);
      var meta=document.createElement('span'); meta.className='ak-muted';
      meta.textContent=' '+[h[2],h[3]].filter(Boolean).join(' \\u00b7 ')+' ';
      li.appendChild(meta);
      var snip=document.createElement('span'); snip.textContent=h[4]; li.appendChild(snip);
      ol.appendChild(li);
    });
    hitsBox.appendChild(ol);
  }
  count.textContent=words+'.';
  var s=state(); if(('#'+s)!==location.hash&&(s||location.hash)){location.replace('#'+s);}
  document.body.setAttribute('data-ak-draw-ms',(performance.now()-t).toFixed(1));
}
function sortBy(c,asc){
  var t=performance.now(); sortCol=c; sortAsc=asc;
  Array.prototype.forEach.call(heads,function(h){h.removeAttribute('data-sort');});
  heads[c].setAttribute('data-sort',asc?'asc':'desc');
  var keys=rows.map(function(r){var t=r.cells[c].textContent.trim(), n=num(t);
    return isNaN(n)?t.toLowerCase():n;});
  var order=rows.map(function(r,i){return i;});
  order.sort(function(a,b){var x=keys[a],y=keys[b], d;
    if(typeof x===typeof y){d=x<y?-1:x>y?1:0;}else{d=typeof x==='number'?-1:1;}
    return (d||a-b)*(asc?1:-1);});
  var frag=document.createDocumentFragment();
  order.forEach(function(i){frag.appendChild(rows[i]);});
  body.appendChild(frag);
  document.body.setAttribute('data-ak-sort-ms',(performance.now()-t).toFixed(1));
}
Array.prototype.forEach.call(heads,function(th,c){
  th.setAttribute('title','sort by this column'); th.tabIndex=0;
  function go(){sortBy(c,!(sortCol===c&&sortAsc)); draw();}
  th.addEventListener('click',go);
  th.addEventListener('keydown',function(e){if(e.key==='Enter'){go();}});
});
Object.keys(f).forEach(function(k){f[k].addEventListener('input',draw);});
$('ak-controls').addEventListener('submit',function(e){e.preventDefault();});
$('ak-controls').addEventListener('reset',function(){setTimeout(draw,0);});
function restore(){
  location.hash.replace(/^#/,'').split('&').forEach(function(part){
    var kv=part.split('='), k=kv[0], v=decodeURIComponent(kv.slice(1).join('=')||'');
    if(k==='sort'){var m=/^([0-9]+)([ad])$/.exec(v);
      if(m&&+m[1]<heads.length){sortBy(+m[1],m[2]==='a');}}
    else if(f.hasOwnProperty(k)){f[k].value=v;}
  });
}
restore(); draw();
document.body.setAttribute('data-ak-ready-ms',(performance.now()-t0).toFixed(1));
})();
""")
