// Loaded before ReDoc: its sidebar always shows its makers' logo, fetched from their site. Brain's
// pages ask nothing of other machines, so an image whose address is on another host gets an empty
// one instead; ReDoc hides a logo that does not load. (The page's Content-Security-Policy refuses
// such images too; this keeps the browser from even starting the request.)
(function () {
  "use strict";
  var setAttribute = Element.prototype.setAttribute;

  function elsewhere(value) {
    try {
      var url = new URL(String(value), document.baseURI);
      return (url.protocol === "http:" || url.protocol === "https:") && url.origin !== window.location.origin;
    } catch (error) {
      return false;
    }
  }

  Element.prototype.setAttribute = function (name, value) {
    if (this instanceof HTMLImageElement && String(name).toLowerCase() === "src" && elsewhere(value)) {
      value = "data:,";
    }
    return setAttribute.call(this, name, value);
  };
  var source = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  if (source && source.set) {
    Object.defineProperty(HTMLImageElement.prototype, "src", {
      configurable: true,
      enumerable: source.enumerable,
      get: source.get,
      set: function (value) { source.set.call(this, elsewhere(value) ? "data:," : value); },
    });
  }
})();
