// Passages were once anchored at "#chunk-N"; answers and links saved before they were renamed still point there.
// A fragment never reaches the server, so the article page itself sends such a link on to "#passage-N", the same
// passage's anchor now. This is the one place the old word stays.
(function () {
  "use strict";

  function followOldAnchor() {
    var old = /^#chunk-(\d+)$/.exec(window.location.hash);
    if (old === null || document.getElementById("chunk-" + old[1]) !== null) {
      return;
    }
    if (document.getElementById("passage-" + old[1]) !== null) {
      // Replaces the old address in the history rather than adding a step: Back leaves the page as before.
      window.location.replace("#passage-" + old[1]);
    }
  }

  followOldAnchor();
  window.addEventListener("hashchange", followOldAnchor);
})();
