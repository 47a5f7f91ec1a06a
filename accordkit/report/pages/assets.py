"""What accordkit writes into every report page it finishes: the page's style (light and
dark) and the script that sorts, filters and pages its tables, declared one of accordkit's
own scripts (:func:`own_script`), the only scripts a sealed page may run."""

from __future__ import annotations

__all__ = ["PAGE_CSS", "DARK_CSS", "PAGE_SCRIPT", "own_script"]

#: Extra style for report pages (sticky headers, the contents box, the notes box).
PAGE_CSS = """
.ak-toc{border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;margin:1rem 0;
background:#f6f8fa;font-size:13px;max-width:60rem}
.ak-toc ol{margin:.2rem 0 .2rem 1.2rem;padding:0} .ak-toc li{margin:.1rem 0}
.ak-toc .ak-toc-kind{color:#57606a;font-size:11px;margin-right:.3rem}
.ak-notes{border:1px solid #d4a72c;background:#fff8c5;border-radius:6px;padding:.5rem 1rem;
margin:1rem 0;font-size:13px;max-width:60rem}
.ak-notes pre{white-space:pre-wrap;margin:.2rem 0;font-size:12px}
.ak-note-ref{font-size:11px;color:#9a6700}
.jp-RenderedHTMLCommon thead th,.ak-paged thead th{position:sticky;top:0;background:#f6f8fa;
z-index:1}
.ak-scroll{max-height:80vh;overflow:auto}
.ak-table{max-width:100%;overflow-x:auto} .ak-table td,.ak-table th,.ak-short{white-space:nowrap}
.ak-pager{font-size:12px;margin:.3rem 0;display:flex;gap:.5rem;align-items:center}
.ak-pager input{font-size:12px;padding:1px 4px}
.ak-sortable thead tr:last-child th{cursor:pointer}
.ak-sortable th[data-sort=asc]::after{content:" \\25B2";font-size:9px}
.ak-sortable th[data-sort=desc]::after{content:" \\25BC";font-size:9px}
.ak-downloads{font-size:12px;margin:.2rem 0 1rem 0}
.ak-table table tbody tr > :first-child,.ak-table table thead tr > :first-child{
position:sticky;left:0;background:var(--jp-layout-color0,#fff);z-index:1}
.ak-repeat{color:var(--jp-ui-font-color2,#57606a)}
.ak-short{text-decoration:underline dotted;text-underline-offset:3px}
.ak-shared{font-size:12px;color:var(--jp-ui-font-color2,#57606a);margin:.1rem 0 .6rem 0}
.ak-pages{display:flex;flex-wrap:wrap;gap:.2rem 1rem;align-items:baseline;
font:13px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;padding:.5rem 1rem;
border-bottom:1px solid #d0d7de;background:#f6f8fa;color:#24292f}
.ak-pages a{color:#0969da;text-decoration:none} .ak-pages a:hover{text-decoration:underline}
.ak-pages a[aria-current=page]{color:inherit;font-weight:600}
.ak-pages .ak-home{font-weight:600;margin-right:.5rem}
.ak-provenance{font:11px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;color:#57606a;
padding:.25rem 1rem;margin:0;border-bottom:1px solid #d0d7de;overflow-wrap:anywhere}
.dataframe tbody tr th:only-of-type{vertical-align:middle}
.dataframe tbody tr th{vertical-align:top} .dataframe thead th{text-align:right}
.ak-wrap thead th{white-space:normal;vertical-align:bottom;min-width:4rem}
.ak-wrap td{white-space:normal;min-width:4rem;max-width:24rem;overflow-wrap:anywhere}
.ak-ci{font-size:11px;color:var(--jp-ui-font-color2,#57606a);white-space:nowrap}
"""

#: The same pages in a dark colour scheme, when the reader's system asks for one: the
#: notebook theme's colour variables, and the boxes this module adds. Figures keep their
#: white background, so that their black text stays readable.
DARK_CSS = """
@media (prefers-color-scheme: dark){
:root{--jp-layout-color0:#0d1117;--jp-layout-color1:#0d1117;--jp-layout-color2:#161b22;
--jp-layout-color3:#21262d;--jp-layout-color4:#30363d;
--jp-ui-font-color0:#f0f6fc;--jp-ui-font-color1:#e6edf3;--jp-ui-font-color2:#9da7b3;
--jp-ui-font-color3:#7d8590;--jp-content-font-color0:#f0f6fc;--jp-content-font-color1:#e6edf3;
--jp-content-font-color2:#9da7b3;--jp-content-font-color3:#7d8590;
--jp-content-link-color:#58a6ff;--jp-border-color0:#30363d;--jp-border-color1:#30363d;
--jp-border-color2:#21262d;--jp-border-color3:#21262d;--jp-cell-editor-background:#161b22;
--jp-rendermime-table-row-background:#161b22;
--jp-rendermime-table-row-hover-background:#1f2937;--jp-rendermime-error-background:#3b1219;
--jp-mirror-editor-variable-color:#e6edf3;color-scheme:dark}
body,.jp-Notebook{background:#0d1117;color:#e6edf3}
a{color:#58a6ff}
img{background:#fff}
.ak-toc,.ak-pages,.jp-RenderedHTMLCommon thead th,.ak-paged thead th{background:#161b22;
border-color:#30363d;color:#e6edf3}
.ak-pages a{color:#58a6ff} .ak-pages a[aria-current=page]{color:#e6edf3}
.ak-toc .ak-toc-kind,.ak-provenance,.ak-shared,.ak-repeat{color:#9da7b3}
.ak-provenance{border-color:#30363d}
.ak-notes{background:#2b2111;border-color:#9e6a03;color:#e6edf3}
.ak-note-ref{color:#d29922}
.ak-pager input,.ak-pager button{background:#161b22;color:#e6edf3;border:1px solid #30363d}
}
"""

#: The scripts accordkit itself writes into its pages (:func:`own_script`): a page sealed by
#: :func:`seal_page` runs these and no other, whatever else its HTML holds.
_OWN_SCRIPTS: set[str] = set()


def own_script(text: str) -> str:
    """Declare ``text`` one of accordkit's own page scripts, the only scripts a page that
    :func:`seal_page` seals may run (its policy names them by sha256; any other script
    element is removed); returns ``text``.

    Examples
    --------
    >>> own_script("void 0;") == "void 0;"
    True
    """
    _OWN_SCRIPTS.add(text)
    return text


#: Sorts, filters and pages the tables in the browser. Every ``.ak-sortable`` box gets a
#: filter box and sortable headers (click: ascending, again: descending); an ``.ak-paged``
#: box is also paged (size from ``data-page-rows``). Numbers sort as numbers (``1,234`` and
#: ``0.91 [0.82, 0.95]`` too), and the filter reads the full text of shortened labels. Rows
#: stay in the HTML, so a reader without scripts sees all.
PAGE_SCRIPT = own_script("""
(function(){
function num(t){var m=/^\\s*(-?[0-9][0-9,]*\\.?[0-9]*(?:e-?[0-9]+)?)/i.exec(t);
  return m?parseFloat(m[1].replace(/,/g,'')):NaN;}
function setup(box){
  var table=box.querySelector('table'); if(!table||!table.tBodies.length){return;}
  var body=table.tBodies[0], rows=Array.prototype.slice.call(body.rows);
  var paged=box.classList.contains('ak-paged');
  var size=paged?parseInt(box.getAttribute('data-page-rows')||'25',10):rows.length;
  var page=0, shown=rows;
  var bar=document.createElement('div'); bar.className='ak-pager';
  var filter=document.createElement('input'); filter.placeholder='filter rows';
  filter.setAttribute('aria-label','filter rows');
  var prev=document.createElement('button'); prev.textContent='\\u2039 previous';
  var next=document.createElement('button'); next.textContent='next \\u203a';
  var info=document.createElement('span');
  bar.appendChild(filter);
  if(paged){bar.appendChild(prev); bar.appendChild(next);}
  bar.appendChild(info);
  box.insertBefore(bar, box.firstChild);
  function text(r){var t=r.textContent;
    Array.prototype.forEach.call(r.querySelectorAll('[title]'),function(e){t+=' '+e.title;});
    return t.toLowerCase();}
  function draw(){
    var pages=Math.max(1,Math.ceil(shown.length/size)); page=Math.min(page,pages-1);
    rows.forEach(function(r){r.style.display='none';});
    shown.slice(page*size,(page+1)*size).forEach(function(r){r.style.display='';});
    info.textContent=(paged?'rows '+(shown.length?page*size+1:0)+'\\u2013'+
      Math.min((page+1)*size,shown.length)+' of '+shown.length:shown.length+' rows')+
      (shown.length<rows.length?' (filtered from '+rows.length+')':'');
    prev.disabled=page===0; next.disabled=page>=pages-1;
  }
  filter.addEventListener('input',function(){
    var q=filter.value.toLowerCase();
    shown=rows.filter(function(r){return text(r).indexOf(q)>=0;});
    page=0; draw();
  });
  prev.addEventListener('click',function(){page-=1; draw();});
  next.addEventListener('click',function(){page+=1; draw();});
  var heads=table.tHead?table.tHead.rows[table.tHead.rows.length-1].cells:[];
  Array.prototype.forEach.call(heads,function(th,i){
    th.setAttribute('title','sort by this column');
    th.addEventListener('click',function(){
      var asc=th.getAttribute('data-sort')!=='asc';
      Array.prototype.forEach.call(heads,function(h){h.removeAttribute('data-sort');});
      th.setAttribute('data-sort',asc?'asc':'desc');
      function key(r){var c=r.cells[i]; var t=c?c.textContent.trim():'';
        var n=num(t); return isNaN(n)?t.toLowerCase():n;}
      rows.sort(function(a,b){var x=key(a),y=key(b);
        if(typeof x===typeof y){return (x<y?-1:x>y?1:0)*(asc?1:-1);}
        return (typeof x==='number'?-1:1)*(asc?1:-1);});
      rows.forEach(function(r){body.appendChild(r);});
      shown=rows.filter(function(r){return shown.indexOf(r)>=0;}); draw();
    });
  });
  draw();
}
document.querySelectorAll('.ak-sortable').forEach(setup);
})();
""")
